import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { createDb, createPool } from '../../src/db/connect.js';
import { adaptivePoller, pollFinishedRuns } from '../../src/engine/poller.js';
import { POLL_BATCH } from '../../src/domain/poll-batch.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
});
afterAll(() => t.drop());

/**
 * Found by `npm run chaos` (database faults): a run whose batch failed was
 * retried alone, and when the connection dropped again it was marked
 * processed as if it were a poison run. Its failure was never counted. A lost
 * connection is not the run's fault: the run must stay unprocessed for the
 * next poll.
 */
it('a connection lost while a run is evaluated leaves the run for the next poll instead of marking it processed', async () => {
  // The backend that inserts an alert is terminated, twice: the batch, then the run alone.
  await sql`create sequence kill_count`.execute(t.db);
  await sql.raw(`
    create function kill_inserting_backend() returns trigger language plpgsql as $$
    begin
      if nextval('kill_count') <= 2 then perform pg_terminate_backend(pg_backend_pid()); end if;
      return new;
    end $$;
    create trigger kill_on_alert before insert on alerts for each row execute function kill_inserting_backend();
  `).execute(t.db);

  const engine = createEngine(t.db, '2026-03-10T02:05:00Z', { PLATFORM_CHANNEL: '' });
  const wf = await makeWorkflow(t.db, { name: 'nightly', cron: '0 2 * * *' });
  const run = await reportRun(t.db, wf, new Date('2026-03-10T02:00:00Z'), { status: 'failed', error: 'disk full' }, engine.clock.now());

  // Each lost connection fails the poll (the runner backs off and polls again), never marks the run processed,
  // and is not followed by a run-at-a-time pass: that kept pollers busy for minutes under repeated faults (issue 19).
  for (let lost = 1; lost <= 2; lost++) {
    await expect(pollFinishedRuns(engine.deps)).rejects.toThrow(/terminat/);
    expect(Number((await sql<{ n: number }>`select last_value as n from kill_count`.execute(t.db)).rows[0]!.n)).toBe(lost);
    expect((await t.db.selectFrom('runs').select('processedAt').where('id', '=', run.id).executeTakeFirstOrThrow()).processedAt).toBeNull();
  }

  // The database is fine again: the next poll evaluates it and the alert opens.
  expect(await pollFinishedRuns(engine.deps)).toBe(true);
  expect(await t.db.selectFrom('alerts').select(['workflowId', 'status']).execute()).toEqual([{ workflowId: wf.id, status: 'open' }]);
});

it('the poller loop takes a smaller batch at once after the database drops one, and grows back as batches commit', async () => {
  // A full batch that outlasts the gap between faults would roll back every time (issue 19), and waiting out
  // the runner's back-off before the next one cost a good part of that gap.
  await sql`drop trigger kill_on_alert on alerts`.execute(t.db);
  await sql`alter sequence kill_count restart`.execute(t.db);
  await sql.raw(`
    create function kill_first() returns trigger language plpgsql as $$
    begin
      if nextval('kill_count') <= TG_ARGV[0]::int then perform pg_terminate_backend(pg_backend_pid()); end if;
      return new;
    end $$;
    create trigger kill_first_run_update before update of processed_at on runs for each row execute function kill_first(1);
  `).execute(t.db);
  const engine = createEngine(t.db, '2026-04-30T00:00:00Z', { PLATFORM_CHANNEL: '' });
  const wf = await makeWorkflow(t.db, { name: 'daily', cron: '0 3 * * *' });
  for (let day = 1; day <= 120; day++) await reportRun(t.db, wf, new Date(Date.UTC(2026, 0, day, 3)), { status: 'succeeded' }, engine.clock.now());
  const unprocessed = async () => Number((await t.db.selectFrom('runs').select((eb) => eb.fn.countAll<number>().as('n')).where('workflowId', '=', wf.id).where('processedAt', 'is', null).executeTakeFirstOrThrow()).n);
  const tick = adaptivePoller(engine.deps);

  // The full batch is dropped; a quarter of it is taken again in the same tick, on a new connection, and commits.
  expect(await tick()).toBe(true);
  expect(await unprocessed()).toBe(120 - POLL_BATCH.max / 4);
  // It committed: the next batch is twice the size.
  await tick();
  expect(await unprocessed()).toBe(120 - POLL_BATCH.max / 4 - POLL_BATCH.max / 2);
});

it('two drops in a row fail the tick (the runner backs off), each one shrinking the batch', async () => {
  await sql`drop trigger kill_first_run_update on runs`.execute(t.db);
  await sql`update runs set processed_at = now() where processed_at is null`.execute(t.db);
  await sql`alter sequence kill_count restart`.execute(t.db);
  await sql`create trigger kill_first_run_update before update of processed_at on runs for each row execute function kill_first(2)`.execute(t.db);
  const engine = createEngine(t.db, '2026-05-30T00:00:00Z', { PLATFORM_CHANNEL: '' });
  const wf = await makeWorkflow(t.db, { name: 'hourly', cron: '0 * * * *' });
  for (let hour = 0; hour < 30; hour++) await reportRun(t.db, wf, new Date(Date.UTC(2026, 4, 1, hour)), { status: 'succeeded' }, engine.clock.now());
  const tick = adaptivePoller(engine.deps);

  await expect(tick()).rejects.toThrow(/terminat/);
  expect(Number((await sql<{ n: number }>`select last_value as n from kill_count`.execute(t.db)).rows[0]!.n)).toBe(2);
  // 100, dropped → 25, dropped → the minimum: the next tick takes that many.
  expect(await tick()).toBe(true);
  const left = await t.db.selectFrom('runs').select((eb) => eb.fn.countAll<number>().as('n')).where('workflowId', '=', wf.id).where('processedAt', 'is', null).executeTakeFirstOrThrow();
  expect(Number(left.n)).toBe(30 - POLL_BATCH.min);
});

it('a database that does not answer fails the tick at once, without a second attempt', async () => {
  await sql`drop trigger kill_first_run_update on runs`.execute(t.db);
  const engine = createEngine(t.db, '2026-06-30T00:00:00Z', { PLATFORM_CHANNEL: '' });
  const away = createDb(createPool('postgres://postgres@127.0.0.1:1/nothing', 1));
  const retried = vi.spyOn(engine.deps.logger, 'info');
  await expect(adaptivePoller({ ...engine.deps, db: away })()).rejects.toThrow(/ECONNREFUSED/);
  expect(retried.mock.calls.filter((c) => String(c[1]).includes('taking a smaller one at once'))).toEqual([]);
  await away.destroy();
});

it('the poller takes its batches through its own pool when it has one', async () => {
  // Its connection does not queue behind the other loops' reconnecting after a fault (issue 19).
  const engine = createEngine(t.db, '2026-07-30T00:00:00Z', { PLATFORM_CHANNEL: '' });
  const wf = await makeWorkflow(t.db, { name: 'weekly', cron: '0 4 * * 1' });
  const run = await reportRun(t.db, wf, new Date('2026-07-27T04:00:00Z'), { status: 'failed', error: 'boom' }, engine.clock.now());
  const away = createDb(createPool('postgres://postgres@127.0.0.1:1/nothing', 1));
  expect(await adaptivePoller({ ...engine.deps, db: away, pollerDb: t.db })()).toBe(true);
  expect((await t.db.selectFrom('runs').select('processedAt').where('id', '=', run.id).executeTakeFirstOrThrow()).processedAt).not.toBeNull();
  await away.destroy();
});
