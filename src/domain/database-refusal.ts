/**
 * A statement the database answered but refused because of its own state,
 * not because of the statement's data or the code: it is read-only (a
 * failover to a standby not yet promoted, `default_transaction_read_only`
 * set for the database or role), out of disk or memory, a statement cut by
 * `statement_timeout` (usually waiting for a lock someone holds) or a lock
 * not granted in time, a serialization failure or deadlock. Like a dropped
 * connection it is nobody's fault and passes: the same statement succeeds
 * later, so a caller that isolates faulty rows must not blame a row for it
 * (the poller would mark a run processed unevaluated, its alert lost), and
 * a client is told to send again (503), not that the server has a bug (500).
 */
export type DatabaseRefusal = 'read_only' | 'disk_full' | 'out_of_resources' | 'statement_timeout' | 'lock_timeout' | 'conflict';

/** SQLSTATE codes (PostgreSQL, appendix A) by the refusal they stand for. */
const REFUSALS: Record<string, DatabaseRefusal> = {
  '25006': 'read_only', // read_only_sql_transaction
  '53100': 'disk_full',
  '53000': 'out_of_resources', // insufficient_resources
  '53200': 'out_of_resources', // out_of_memory
  '53400': 'out_of_resources', // configuration_limit_exceeded
  '58030': 'out_of_resources', // io_error
  '57014': 'statement_timeout', // query_canceled: statement_timeout, or pg_cancel_backend
  '55P03': 'lock_timeout', // lock_not_available
  '40001': 'conflict', // serialization_failure
  '40P01': 'conflict', // deadlock_detected
};

/** The refusal a SQLSTATE stands for; undefined for every other code (a constraint, a bug, a connection error). */
export function databaseRefusal(sqlstate: string | undefined): DatabaseRefusal | undefined {
  return sqlstate === undefined ? undefined : REFUSALS[sqlstate];
}

/**
 * Whether a refusal is the whole database's (read-only, out of disk or
 * memory: every write fails alike, so taking a failed batch's runs one at a
 * time only fails again) or one transaction's (a lock it waited for, a
 * conflict: the batch's other runs may well go through on their own).
 */
export function refusalScope(refusal: DatabaseRefusal): 'database' | 'transaction' {
  return refusal === 'read_only' || refusal === 'disk_full' || refusal === 'out_of_resources' ? 'database' : 'transaction';
}

/**
 * How long a refused client is asked to wait (`Retry-After`, seconds): a
 * conflict clears at once, a lock or a failover in seconds, a full disk
 * only when someone frees space, so thousands of jobs resending every 2 s
 * would only add load.
 */
export function refusalRetryAfterSeconds(refusal: DatabaseRefusal): number {
  switch (refusal) {
    case 'conflict':
      return 1;
    case 'statement_timeout':
    case 'lock_timeout':
      return 5;
    case 'read_only':
      return 10;
    case 'disk_full':
    case 'out_of_resources':
      return 30;
  }
}

/** The refusal in words, for a client's 503 and the log (operator-facing, no server detail). */
export function refusalText(refusal: DatabaseRefusal): string {
  switch (refusal) {
    case 'read_only':
      return 'the database is read-only (a failover in progress?) and refuses writes';
    case 'disk_full':
      return "the database's disk is full";
    case 'out_of_resources':
      return 'the database is out of memory or another resource';
    case 'statement_timeout':
      return 'the database did not finish the statement in time (a lock held elsewhere?)';
    case 'lock_timeout':
      return 'a row is locked by another session';
    case 'conflict':
      return 'the database aborted the transaction on a conflict with another one';
  }
}
