import { describe, expect, it } from 'vitest';
import { errorGroupOf, fingerprintError, normaliseError, type GroupedOutcome } from '../../src/domain/fingerprint.js';

describe('error fingerprint', () => {
  it('groups errors that differ only in numbers, ids, timestamps, quoted values and paths', () => {
    const a = fingerprintError('2026-03-10T02:03:11Z ERROR run 4711 failed: relation "orders_2026_03" not found in /var/lib/jobs/abc/run.py (request 9f1c2e3a-1b2c-4d5e-8f90-123456789abc, commit 3fa9c81be2)');
    const b = fingerprintError('2026-03-11T02:04:59.123Z ERROR run 4790 failed: relation "orders_2026_04" not found in /var/lib/jobs/xyz/run.py (request 0a1b2c3d-0000-4d5e-8f90-abcdefabcdef, commit 77ab12cd90)');
    expect(a).toMatch(/^[0-9a-f]{12}$/);
    expect(a).toBe(b);
  });

  it('keeps different failures apart', () => {
    expect(fingerprintError('connection reset by peer')).not.toBe(fingerprintError('permission denied for table orders'));
    expect(fingerprintError('timed out')).not.toBe(fingerprintError('worker lost'));
  });

  it("an apostrophe inside a word is no quote: contractions do not swallow the words between them", () => {
    // Between "can't" and "won't" lies the whole error: read as one quoted value, both would be "can'<q>'t retry".
    expect(fingerprintError("Can't connect to database, won't retry")).not.toBe(fingerprintError("Can't parse config, won't retry"));
    expect(fingerprintError("job's input wasn't found")).not.toBe(fingerprintError("job's output wasn't written"));
    // A quoted value is still one, beside a contraction.
    expect(normaliseError("Table 'orders_2026' doesn't exist")).toBe("table '<q>' doesn't exist");
    expect(fingerprintError("KeyError: 'user_id' (can't map)")).toBe(fingerprintError("KeyError: 'order_id' (can't map)"));
  });

  it('quoted values: escapes inside, unclosed quotes left as they are', () => {
    expect(normaliseError('bad value "a\\"b" here')).toBe('bad value "<q>" here');
    expect(normaliseError("bad value 'a\\'b' here")).toBe("bad value '<q>' here");
    expect(normaliseError('unclosed "abc and "def" after')).toBe('unclosed "<q>"def" after');
    expect(normaliseError('only "open')).toBe('only "open');
    expect(normaliseError("it's 'x' and 'y")).toBe("it's '<q>' and 'y");
    // A backslash before a line break ends no escape: the value cannot go on past it, and the next quote starts afresh.
    expect(normaliseError('"a\\\n" "b"')).toBe('"a\\ "<q>"b"');
  });

  it('an adversarial error (100,000 escaped quotes that never close) is normalised in linear time', () => {
    // Tried as a regular expression at every quote, each read on to the end: 200,000 characters took minutes
    // of the poller's time (and a tenant token may report 10,000-character errors as fast as it likes).
    // No clock is read here: the quadratic form does not finish within the test's timeout, the linear one in milliseconds.
    for (const text of ['"' + '\\"'.repeat(100_000), "'" + "\\'".repeat(100_000)]) {
      // Nothing in them closes, so nothing is replaced (compared as a flag: a failure must not print 200,000 characters).
      expect(normaliseError(text) === text).toBe(true);
    }
  });

  it('normalises to readable placeholders and ignores empty text', () => {
    expect(normaliseError("value 'abc' at 0xDEADBEEF took 12.5s")).toBe("value '<q>' at <hex> took <n>s");
    expect(fingerprintError('   ')).toBeNull();
    expect(fingerprintError(null)).toBeNull();
  });
});

describe('errorGroupOf: the group a finished run is stored with', () => {
  const g = fingerprintError;
  it.each<[string, GroupedOutcome, string | null]>([
    ['a success: none', { status: 'succeeded', error: null }, null],
    ['a skipped tick: none', { status: 'skipped', error: 'the monitor was not running' }, null],
    ['a failure: its error', { status: 'failed', error: 'connect ETIMEDOUT 10.0.4.17:5432' }, g('connect ETIMEDOUT 10.0.4.99:5432')],
    ['a timeout (freshness): its words', { status: 'failed', error: 'timed out' }, g('timed out')],
    ['a failure without a message', { status: 'failed', error: null }, g('failed without an error message')],
    ['a failure with a blank message: as without one', { status: 'failed', error: '   ' }, g('failed without an error message')],
    ['a missed tick: one group whatever its window', { status: 'missed', error: 'missed: no run started by 2026-03-10T02:10:00.000Z' }, g('missed')],
    ['empty output: one group whatever the counts', { status: 'failed', error: 'empty output: 3 rows, expected at least 100', emptyOutput: true }, g('empty output')],
  ])('%s', (_case, outcome, expected) => {
    expect(errorGroupOf(outcome)).toBe(expected);
  });
});
