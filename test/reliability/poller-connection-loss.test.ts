import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { adaptivePoller, DEFAULT_POLL_BATCH, pollFinishedRuns } from '../../src/engine/poller.js';
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

it('the poller loop takes a smaller batch after the database drops one, and grows back as batches commit', async () => {
  // A full batch that outlasts the gap between faults would roll back every time (issue 19).
  await sql`drop trigger kill_on_alert on alerts`.execute(t.db);
  await sql`alter sequence kill_count restart`.execute(t.db);
  await sql.raw(`
    create function kill_once() returns trigger language plpgsql as $$
    begin
      if nextval('kill_count') = 1 then perform pg_terminate_backend(pg_backend_pid()); end if;
      return new;
    end $$;
    create trigger kill_first_run_update before update of processed_at on runs for each row execute function kill_once();
  `).execute(t.db);
  const engine = createEngine(t.db, '2026-04-30T00:00:00Z', { PLATFORM_CHANNEL: '' });
  const wf = await makeWorkflow(t.db, { name: 'daily', cron: '0 3 * * *' });
  for (let day = 1; day <= 120; day++) await reportRun(t.db, wf, new Date(Date.UTC(2026, 0, day, 3)), { status: 'succeeded' }, engine.clock.now());
  const unprocessed = async () => Number((await t.db.selectFrom('runs').select((eb) => eb.fn.countAll<number>().as('n')).where('workflowId', '=', wf.id).where('processedAt', 'is', null).executeTakeFirstOrThrow()).n);
  const tick = adaptivePoller(engine.deps);

  await expect(tick()).rejects.toThrow(/terminat/);
  expect(await unprocessed()).toBe(120);
  // A quarter of the full batch, then double that.
  await tick();
  expect(await unprocessed()).toBe(120 - DEFAULT_POLL_BATCH / 4);
  await tick();
  expect(await unprocessed()).toBe(120 - DEFAULT_POLL_BATCH / 4 - DEFAULT_POLL_BATCH / 2);
});
