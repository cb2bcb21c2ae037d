import { CamelCasePlugin, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { isStalePreparedStatement, preparedName } from './prepared.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

// int8 (count(*), bigserial ids) as numbers: ids stay far below 2^53.
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

/**
 * Nothing waits on the database forever (issue 19): a connection attempt
 * gives up after CONNECT_TIMEOUT_MS, the server cancels a statement after
 * STATEMENT_TIMEOUT_MS and ends a session left idle in a transaction after
 * IDLE_IN_TRANSACTION_MS, and a query whose answer never arrives (the server
 * gone without a word) fails after QUERY_TIMEOUT_MS, its connection
 * destroyed so the pool replaces it.
 */
export const DB_TIMEOUTS = {
  CONNECT_TIMEOUT_MS: 5_000,
  STATEMENT_TIMEOUT_MS: 30_000,
  IDLE_IN_TRANSACTION_MS: 60_000,
  QUERY_TIMEOUT_MS: 35_000,
  /** Idle pool connections are closed after this: fewer stale ones to find after a restart. */
  IDLE_TIMEOUT_MS: 10_000,
};

/**
 * `limits`: `engine` (every pool of a running replica) bounds each statement
 * and each answer as above; `migrations` does not: a migration may build an
 * index over a ledger of millions of runs for minutes, and a replica waits
 * for another's migrations under kysely's lock for as long as they take.
 * Both were cancelled at 30 s, so a long migration failed on every start.
 */
export function createPool(url: string, max = 10, applicationName = 'scheduler-bot', limits: 'engine' | 'migrations' = 'engine'): pg.Pool {
  const bounded = limits === 'engine';
  const pool = new pg.Pool({
    connectionString: url,
    max,
    types,
    application_name: applicationName,
    // No JIT: every statement here is short, and on a large ledger the planner's cost estimates pass
    // jit_above_cost, so a query of a few milliseconds spent seconds compiling (bench/ledger-growth.ts).
    options: '-c jit=off',
    connectionTimeoutMillis: DB_TIMEOUTS.CONNECT_TIMEOUT_MS,
    ...(bounded ? { statement_timeout: DB_TIMEOUTS.STATEMENT_TIMEOUT_MS, query_timeout: DB_TIMEOUTS.QUERY_TIMEOUT_MS } : {}),
    idle_in_transaction_session_timeout: DB_TIMEOUTS.IDLE_IN_TRANSACTION_MS,
    idleTimeoutMillis: DB_TIMEOUTS.IDLE_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle client that loses its server (Postgres restart) must not crash the process;
  // the pool drops it and the next query gets a fresh connection.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    // pg-pool drops its own listener while a client is checked out, so a backend
    // terminated between two statements of a transaction would emit an unheard
    // 'error' and kill the process. Heard here, the next query on that client
    // fails instead, the transaction rolls back and the pool discards the client.
    client.on('error', () => {});
    discardOnQueryTimeout(client);
  });
  return pool;
}

/**
 * pg's query_timeout fails the caller's promise but leaves the query active
 * on the connection: every later query on it would queue behind an answer
 * that is not coming. The connection is destroyed instead, which makes the
 * client unqueryable, so the pool discards it on release.
 * A statement marked `prepared` is sent as a named prepared statement
 * (src/db/prepared.ts); when one goes stale under a migration, this
 * connection prepares its statements again under new names.
 */
function discardOnQueryTimeout(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  let generation = 0;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const name = typeof args[0] === 'string' && Array.isArray(args[1]) ? preparedName(args[0]) : undefined;
    const result = name ? query({ name: generation ? `${name}_${generation}` : name, text: args[0], values: args[1] }) : query(...args);
    if (result && typeof (result as Promise<unknown>).catch === 'function') {
      (result as Promise<unknown>).catch((error: unknown) => {
        if (error instanceof Error && error.message === 'Query read timeout') (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
        if (isStalePreparedStatement(error)) generation++;
        if ((error as { code?: unknown } | null)?.code === READ_ONLY_SQLSTATE) discardOnRelease(client);
      });
    }
    return result;
  };
}

const READ_ONLY_SQLSTATE = '25006';

/**
 * A session that met "read-only" keeps the default it was started with: a
 * database or role set `default_transaction_read_only = on` (a failover
 * under way) and set back leaves every open session read-only, and the
 * loops' connections are never idle long enough to be replaced. Such a
 * connection is closed when it goes back to the pool (`release(err)`: the
 * pool's own way to drop one), so the next is opened with the current setting.
 * The pool sets `release` afresh at each checkout: this one only is affected.
 */
function discardOnRelease(client: pg.PoolClient): void {
  const release = client.release;
  client.release = (err?: Error | boolean) => release(err || new Error('session met read-only: discarded'));
}

export function createDb(pool: pg.Pool): Db {
  // JSON columns keep their keys as written: a launcher's env JOB_SETTING or a header X-Api_Key is data, not a column name.
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }), plugins: [new CamelCasePlugin({ maintainNestedObjectKeys: true })] });
}
