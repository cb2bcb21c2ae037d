import { CamelCasePlugin, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

// int8 (count(*), bigserial ids) as numbers: ids stay far below 2^53.
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

export function createPool(url: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, types, application_name: 'scheduler-bot' });
  // An idle client that loses its server (Postgres restart) must not crash the process;
  // the next query gets a fresh connection.
  pool.on('error', () => {});
  // pg-pool drops its own listener while a client is checked out, so a backend
  // terminated between two statements of a transaction would emit an unheard
  // 'error' and kill the process. Heard here, the next query on that client
  // fails instead, the transaction rolls back and the pool discards the client.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

export function createDb(pool: pg.Pool): Db {
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }), plugins: [new CamelCasePlugin()] });
}
