import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import { elapsedMs } from './stats.js';

/**
 * The floor of the throughput benchmark: the cheapest version of the
 * engine's work on the same database. Each batch is one statement (so one
 * transaction): claim the same 100 finished runs the poller claims, the same
 * way (`for update skip locked`, mark processed), and insert as many rows as
 * the engine writes for them (its alerts, events and outbox rows per run,
 * measured in the same repeat), each with a small JSON payload. No routing,
 * no evaluation, no reads besides the claim.
 */
const BATCH = 100;

export async function createFloorTable(db: Db): Promise<void> {
  await sql`create table if not exists bench_floor_rows (id bigserial primary key, run_id bigint not null, payload jsonb not null)`.execute(db);
}

/** Runs per second with `connections` loops claiming concurrently until no unprocessed run is left. */
export async function timeFloor(db: Db, connections: number, rowsPerRun: number): Promise<number> {
  await sql`truncate bench_floor_rows`.execute(db);
  const t0 = performance.now();
  const counts = await Promise.all(Array.from({ length: connections }, () => drain(db, rowsPerRun)));
  const runs = counts.reduce((a, b) => a + b, 0);
  return runs / (elapsedMs(t0) / 1000);
}

async function drain(db: Db, rowsPerRun: number): Promise<number> {
  let total = 0;
  for (;;) {
    const { rows } = await sql<{ n: number }>`
      with claimed as (
        select id from runs
        where processed_at is null and status in ('succeeded', 'failed', 'missed')
        order by id
        limit ${BATCH}
        for update skip locked
      ), done as (
        update runs set processed_at = now() from claimed where runs.id = claimed.id returning runs.id
      ), written as (
        insert into bench_floor_rows (run_id, payload)
        select (select max(id) from done), jsonb_build_object('kind', 'opened', 'row', g, 'text', 'connection to db-1 refused after 13 ms')
        from generate_series(1, (select round(count(*) * ${rowsPerRun}::float8)::int from done)) g
        returning 1
      )
      select (select count(*)::int from done) as n, (select count(*) from written) as w
    `.execute(db);
    const n = rows[0]!.n;
    if (n === 0) return total;
    total += n;
  }
}
