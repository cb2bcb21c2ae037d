import { expect, it } from 'vitest';
import { readinessWatcher } from '../../src/db/embedded-as-root.js';

/**
 * Restarted under clients already reconnecting (the chaos suite's database
 * faults), the server wrote its readiness line and hundreds of characters of
 * connection lines in one chunk: the last 500 characters were kept before the
 * line was looked for, the start never resolved, and the suite hung.
 */
it('sees the readiness line however the chunks fall: with a flood after it, split across two chunks, or not at all', () => {
  const flood = '2026-12-02 08:48:45.291 UTC [27390] FATAL:  the database system is starting up\n'.repeat(20);
  const one = readinessWatcher();
  expect(one(`LOG:  database system is ready to accept connections\n${flood}`)).toBe(true);

  const split = readinessWatcher();
  expect(split('LOG:  database system is ready to acc')).toBe(false);
  expect(split(`ept connections\n${flood}`)).toBe(true);
  expect(split('more lines\n')).toBe(true);

  const never = readinessWatcher();
  expect(never(flood)).toBe(false);
  expect(never('LOG:  database system is shut down\n')).toBe(false);
});
