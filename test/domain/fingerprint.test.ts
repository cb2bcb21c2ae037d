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

  it.each<[string, string, string]>([
    [
      'Python traceback: line numbers and object addresses',
      'Traceback (most recent call last):\n  File "/app/jobs/export.py", line 42, in run\nValueError: bad row at <Row object at 0x7f3a2b1c4d50>',
      'Traceback (most recent call last):\r\n  File "/app/jobs/export.py", line 57, in run\r\nValueError: bad row at <Row object at 0x7f9e8d7c6b40>',
    ],
    ['Java stack: line numbers', 'java.lang.NullPointerException\n\tat com.acme.Export.run(Export.java:42)', 'java.lang.NullPointerException\n\tat com.acme.Export.run(Export.java:57)'],
    ['a path with a date', 'file not found: /data/2026-03-10/export.csv', 'file not found: /data/2026-03-11/export.csv'],
    ['IPv4 and port', 'connect ECONNREFUSED 10.0.0.1:5432', 'connect ECONNREFUSED 10.20.0.17:6432'],
    ['IPv6, bracketed with a port', 'connect ECONNREFUSED [2001:db8::1]:5432', 'connect ECONNREFUSED [fe80::a1b2:c3d4]:5432'],
    ['IPv6, eight groups', 'no route to 2001:0db8:85a3:0000:0000:8a2e:0370:7334', 'no route to 2001:0db8:85a3:0000:0000:8a2e:0370:733f'],
    ['durations', 'query took 12.3s, gave up after 1500ms', 'query took 1.5s, gave up after 30000ms'],
    ["a CronJob's pod", 'pod nightly-export-28473829-xkq2p failed: OOMKilled', 'pod nightly-export-28473901-bvtzr failed: OOMKilled'],
    ["a Deployment's pod, across a rollout", 'pod/web-7d4b9c8f6d-x2kqp OOMKilled', 'pod/web-5fkq9zt7bd-rwc8n OOMKilled'],
    ["a Job's pod with a digit in its suffix", 'migrate-db-x7k2p exited 1', 'migrate-db-q9zt2 exited 1'],
    [
      "S3's request ids (Java SDK)",
      'Access Denied (Service: Amazon S3; Status Code: 403; Request ID: 4442587FB7D0A2F9; S3 Extended Request ID: vlR7PnpV2Ce81l0PRw6jlUpck7Jo5ZsQjryTjKlc5aLWGVHPZLj5NeC6qMa0emYBDXOo6QBU0Wo=)',
      'Access Denied (Service: Amazon S3; Status Code: 403; Request ID: 9C1B2A3D4E5F6071; S3 Extended Request ID: Zq8x/3kPLmN0aB7cD2eF4gH6iJ8kL0mN2oP4qR6sT8uV0wX2yZ4aB6cD8eF0gH2iJ4kL6mN8o==)',
    ],
    ['colour codes', '\u001b[1;31mERROR\u001b[0m connection lost', 'ERROR connection lost'],
    ['syslog time, across a month', 'Mar 31 23:59:58 host cron[1234]: export failed', 'Apr  1 00:00:03 host cron[987]: export failed'],
    ['an HTTP date, across a weekday', 'upstream said no at Tue, 10 Mar 2026 02:03:11 GMT', 'upstream said no at Wed, 11 Mar 2026 02:03:11 GMT'],
    ["GCC's typographic quotes", 'error: \u2018foo\u2019 was not declared in this scope', 'error: \u2018bar\u2019 was not declared in this scope'],
    ['one text in either Unicode form', 'Datei fehlt: Gr\u00f6\u00dfe', 'Datei fehlt: Gro\u0308\u00dfe'],
  ])('one group for the same failure: %s', (_case, a, b) => {
    expect(normaliseError(a)).toBe(normaliseError(b));
  });

  it('keeps apart what only looks like a volatile part', () => {
    const apart: [string, string][] = [
      ['backend-https down', 'backend-mssql down'],
      ['job migrate-db-bvtzr failed', 'job migrate-db-kqzwp failed'],
      ['std::runtime_error in Foo::Bar', 'std::logic_error in Foo::Bar'],
      ['AmazonS3ClientBuilderException: no region', 'AmazonDynamoDBClientBuilderException: no region'],
      ['you may 5 times retry', 'you must 5 times retry'],
      ['Fehler: Datei nicht gefunden', 'Fehler: Verbindung abgelehnt'],
      ['\u63a5\u7d9a\u306b\u5931\u6557\u3057\u307e\u3057\u305f', '\u30d5\u30a1\u30a4\u30eb\u304c\u898b\u3064\u304b\u308a\u307e\u305b\u3093'],
      ['x'.repeat(10_000) + ' connection refused', 'x'.repeat(10_000) + ' permission denied'],
    ];
    for (const [a, b] of apart) expect(fingerprintError(a), a).not.toBe(fingerprintError(b));
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
