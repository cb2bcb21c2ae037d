import { describe, expect, it } from 'vitest';
import { pingParameters } from '../../src/domain/ping-parameters.js';

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
