import { databaseRefusal, type DatabaseRefusal } from '../domain/database-refusal.js';

/**
 * Whether an error means "the database could not be reached or dropped us",
 * as opposed to something wrong with the data or the code. The first is
 * nobody's fault and passes; callers that isolate faulty rows must not
 * blame a row for it.
 */
export function isConnectionError(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  // 08: connection exception; 57P01-57P03: admin/crash shutdown, cannot connect now; 53300: too many connections;
  // 25P03: the session was ended for idling in a transaction.
  if (code.startsWith('08') || /^57P0[1-3]$/.test(code) || code === '53300' || code === '25P03') return true;
  if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN'].includes(code)) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  // A database closed to connections (ALTER DATABASE … ALLOW_CONNECTIONS false, for maintenance) answers 55000, a code shared with data errors: told by its message.
  return /Connection terminated|connection error and is not queryable|terminating connection|timeout exceeded when trying to connect|Query read timeout|the database system is (starting up|shutting down|in recovery)|is not currently accepting connections/i.test(message);
}

/**
 * Of the connection errors, those that mean the database is not answering
 * at all (refused, not resolvable, a connect that timed out, a server
 * starting up or shutting down), as opposed to a connection it dropped
 * after answering (terminated, reset mid-query): after the first kind a
 * loop backs off; after the second, a new connection usually works at once.
 */
export function isDatabaseAway(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', '57P03', '53300'].includes(code)) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  return /timeout exceeded when trying to connect|the database system is (starting up|shutting down|in recovery)|is not currently accepting connections/i.test(message);
}

/** The refusal (read-only, disk full, a timeout, a conflict: src/domain/database-refusal.ts) an error from the database is, if any. */
export function databaseRefusalOf(error: unknown): DatabaseRefusal | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? databaseRefusal(code) : undefined;
}

/**
 * The database failing, not the data or the code: a connection error, or a
 * statement it answered but refused for its own state (`databaseRefusalOf`).
 * Either passes; neither is a row's fault.
 */
export function isDatabaseFault(error: unknown): boolean {
  return isConnectionError(error) || databaseRefusalOf(error) !== undefined;
}
