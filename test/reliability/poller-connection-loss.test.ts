import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pollFinishedRuns } from '../../src/engine/poller.js';
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
