import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDb, createPool } from '../../src/db/connect.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.drop());

it('a session the server ended is dropped from the pool at once: the next statement gets a fresh one, not the dead one', async () => {
  const db = createDb(createPool(t.url, 1));
  try {
    const pid = async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid;
    const first = await pid();
    // A real termination: the server answers FATAL 57P01, then closes the socket.
    await expect(sql`select pg_terminate_backend(pg_backend_pid())`.execute(db)).rejects.toThrow(/terminat/);
    const second = await pid();
    expect(second).not.toBe(first);
  } finally {
    await db.destroy();
  }
});
