import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createDb, createPool, type Db } from '../../src/db/connect.js';
import { prepared } from '../../src/db/prepared.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let t: TestDatabase;
let db: Db;
beforeEach(async () => {
  t = await createTestDatabase();
  // One connection: every statement below runs on the same session.
  db = createDb(createPool(t.url, 1));
});
afterEach(async () => {
  await db.destroy();
  await t.drop();
});

const marked = (id: number) => sql<{ id: string; name: string }>`${prepared}select t.* from tenants t where t.id = ${`t${id}`}`;

it('a statement marked prepared is prepared once per connection under a name of its text, and answers like any other', async () => {
  await sql`insert into tenants (id, name) values ('t1', 'One'), ('t2', 'Two')`.execute(db);
  expect((await marked(1).execute(db)).rows.map((r) => r.name)).toEqual(['One']);
  expect((await marked(2).execute(db)).rows.map((r) => r.name)).toEqual(['Two']);
  const { rows } = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(db);
  expect(rows).toHaveLength(1);
  expect(rows[0]!.name).toMatch(/^sb_[0-9a-f]{20}$/);
  expect(rows[0]!.statement).toContain('from tenants t where t.id = $1');
  // Unmarked statements stay unnamed.
  await sql`select 1`.execute(db);
  expect((await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`.execute(db)).rows[0]!.n).toBe(1);
});

it('a prepared statement gone stale under a migration (a column added to a table it reads with *) fails once, then is prepared again', async () => {
  await sql`insert into tenants (id, name) values ('t1', 'One')`.execute(db);
  await marked(1).execute(db);
  await sql`alter table tenants add column added_later text`.execute(t.db);
  await expect(marked(1).execute(db)).rejects.toThrow(/cached plan must not change result type/);
  const after = await marked(1).execute(db);
  expect(after.rows).toEqual([expect.objectContaining({ name: 'One', addedLater: null })]);
  expect(await marked(1).execute(db)).toEqual(after);
});
