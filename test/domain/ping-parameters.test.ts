import { describe, expect, it } from 'vitest';
import { pingParameters, pingSignal } from '../../src/domain/ping-parameters.js';

describe('pingParameters', () => {
  it('takes one rid, or none', () => {
    expect(pingParameters({})).toEqual({ ok: true });
    expect(pingParameters({ rid: 'a1:b-c_d.e' })).toEqual({ ok: true, rid: 'a1:b-c_d.e' });
    expect(pingParameters({ other: ['x', 'y'] })).toEqual({ ok: true });
  });

  it('refuses a repeated rid, or one that is not a string, naming it', () => {
    expect(pingParameters({ rid: ['a', 'b'] })).toEqual({ ok: false, problem: expect.stringMatching(/^rid: .*repeated/) });
    expect(pingParameters({ rid: { x: 'a' } })).toMatchObject({ ok: false, problem: expect.stringMatching(/^rid: /) });
    expect(pingParameters({ rid: '' })).toMatchObject({ ok: false, problem: expect.stringMatching(/^rid: /) });
    expect(pingParameters({ rid: 'a b' })).toMatchObject({ ok: false });
  });
});

describe('pingSignal', () => {
  it('reads the forms docs/api.md lists', () => {
    expect(pingSignal(undefined)).toEqual({ ok: true, signal: { kind: 'success' } });
    expect(pingSignal('start')).toEqual({ ok: true, signal: { kind: 'start' } });
    expect(pingSignal('fail')).toEqual({ ok: true, signal: { kind: 'fail' } });
    expect(pingSignal('0')).toEqual({ ok: true, signal: { kind: 'exit', code: 0 } });
    expect(pingSignal('255')).toEqual({ ok: true, signal: { kind: 'exit', code: 255 } });
    expect(pingSignal('007')).toEqual({ ok: true, signal: { kind: 'exit', code: 7 } });
  });

  it('an exit code out of 0-255 is refused naming it and the range: it is never read as another code or a success', () => {
    expect(pingSignal('256')).toEqual({ ok: false, problem: 'exit code 256 is out of range: use 0-255, as a shell\'s $? is; nothing was recorded' });
    expect(pingSignal('-1')).toEqual({ ok: false, problem: 'exit code -1 is out of range: use 0-255, as a shell\'s $? is; nothing was recorded' });
    expect(pingSignal('3221225477')).toMatchObject({ ok: false, problem: expect.stringMatching(/^exit code 3221225477 is out of range: use 0-255/) });
    // What is echoed is cut: the answer never repeats a caller's long text.
    const long = pingSignal('9'.repeat(500));
    expect(long.ok).toBe(false);
    expect(long.ok === false && long.problem.length).toBeLessThan(120);
  });

  it('/log (Healthchecks records a message without a state) is refused with the reason and what to do instead', () => {
    expect(pingSignal('log')).toEqual({ ok: false, problem: expect.stringMatching(/^\/log is not supported: .*send the output as the body of the end ping/) });
  });

  it('anything else names the forms', () => {
    for (const raw of ['START', '1.0', 'sideways', '+1', '0x10']) expect(pingSignal(raw), raw).toEqual({ ok: false, problem: 'unknown ping: use /start, /fail, or an exit code 0-255' });
  });
});
