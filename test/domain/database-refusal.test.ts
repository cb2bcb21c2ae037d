import { describe, expect, it } from 'vitest';
import { databaseRefusal, refusalRetryAfterSeconds, refusalScope } from '../../src/domain/database-refusal.js';

describe('databaseRefusal: which SQLSTATEs are the database refusing for its own state, not the data', () => {
  it.each([
    ['25006', 'read_only', 'database', 10],
    ['53100', 'disk_full', 'database', 30],
    ['53200', 'out_of_resources', 'database', 30],
    ['58030', 'out_of_resources', 'database', 30],
    ['57014', 'statement_timeout', 'transaction', 5],
    ['55P03', 'lock_timeout', 'transaction', 5],
    ['40001', 'conflict', 'transaction', 1],
    ['40P01', 'conflict', 'transaction', 1],
  ] as const)('%s is %s, the whole %s\'s, retried after %i s', (code, refusal, scope, retryAfter) => {
    expect(databaseRefusal(code)).toBe(refusal);
    expect(refusalScope(refusal)).toBe(scope);
    expect(refusalRetryAfterSeconds(refusal)).toBe(retryAfter);
  });

  it.each([
    ['23505', 'a unique violation: the data'],
    ['22P02', 'invalid text representation: the data'],
    ['42P01', 'an undefined table: the code'],
    ['08006', 'a connection failure: told apart by isConnectionError'],
    ['55000', 'object not in prerequisite state: shared with data errors'],
    [undefined, 'no code at all'],
  ] as [string | undefined, string][])('%s is not a refusal (%s)', (code) => {
    expect(databaseRefusal(code)).toBeUndefined();
  });
});
