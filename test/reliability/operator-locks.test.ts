import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { checkRunDurations } from '../../src/engine/run-duration.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { newRunRow } from '../../src/ledger/runs.js';
import { systemClock } from '../../src/clock.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun } from '../helpers/engine-harness.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * An operator's psql session holds a lock on one workflow's row (`BEGIN;
 * UPDATE workflows …` left open, or `SELECT … FOR UPDATE`). Only that
 * workflow may wait for it: a loop goes on with every other workflow at
 * once, and the held one is taken when the lock goes.
 */

const TICK = at('2026-03-10T02:00:00Z');
let t: TestDatabase;
let operator: pg.Client;
beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
  operator = new pg.Client({ connectionString: t.url, application_name: 'psql' });
  await operator.connect();
});
afterAll(async () => {
  await operator?.end();
  await t?.drop();
});

/** The operator's open transaction, holding `workflow`'s row; the function ends it. */
async function lockedByOperator(workflow: Workflow): Promise<() => Promise<void>> {
  await operator.query('begin');
  await operator.query('select 1 from workflows where id = $1 for update', [workflow.id]);
  return async () => void (await operator.query('rollback'));
}

/** `work` settles within `ms` (it is still awaited to its end by the caller), or the test fails saying what it waited for. */
async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms)));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A workflow whose six last nights took 20 minutes, running tonight since the tick. */
async function runningTonight(name: string): Promise<Workflow> {
  const workflow = await makeWorkflow(t.db, { tenantId: 'acme', name, cron: '0 2 * * *', createdAt: at('2026-03-01T00:00:00Z') });
  const nights = [1, 2, 3, 4, 5, 6].map((d) => {
    const tick = new Date(TICK.getTime() - d * 86_400_000);
    return newRunRow({ workflowId: workflow.id, tick, trigger: 'schedule', status: 'succeeded', attemptStatus: 'succeeded', startedAt: tick, finishedAt: new Date(tick.getTime() + 1_200_000), durationSeconds: 1200, processedAt: tick });
  });
  await t.db.insertInto('runs').values(nights).execute();
  await t.db.insertInto('runs').values(newRunRow({ workflowId: workflow.id, tick: TICK, trigger: 'schedule', status: 'running', startedAt: TICK, deadlineAt: new Date(TICK.getTime() + 6 * 3_600_000) })).execute();
  return workflow;
}

const openedFor = async (workflow: Workflow) => (await t.db.selectFrom('alerts').select('cause').where('workflowId', '=', workflow.id).execute()).map((a) => a.cause);

it('running long: a workflow row held by an operator holds that workflow only, not the loop', async () => {
  const held = await runningTonight('held');
  const other = await runningTonight('other');
  const engine = createEngine(t.db, '2026-03-10T03:00:00Z', { PLATFORM_CHANNEL: '' });
  const release = await lockedByOperator(held);
  try {
    // Before, the loop waited on the held row (30 s, then the statement timeout failed the whole pass), every pass.
    await within(5_000, 'run durations pass', checkRunDurations(engine.deps));
    expect(await openedFor(other)).toEqual(['running_long']);
    expect(await openedFor(held)).toEqual([]);
  } finally {
    await release();
  }
  await checkRunDurations(engine.deps);
  expect(await openedFor(held)).toEqual(['running_long']);
});

it('the poller, with nothing else to claim, waits its turn on a dependency group only briefly when an operator holds the upstream', async () => {
  const up = await makeWorkflow(t.db, { tenantId: 'acme', name: 'extract', cron: '0 1 * * *' });
  const down = await makeWorkflow(t.db, { tenantId: 'acme', name: 'load', cron: '0 3 * * *' });
  await t.db.insertInto('workflowDependencies').values({ workflowId: down.id, upstreamId: up.id }).execute();
  const engine = createEngine(t.db, '2026-03-10T03:30:00Z', { PLATFORM_CHANNEL: '' });
  const run = await reportRun(t.db, down, at('2026-03-10T03:00:00Z'), { status: 'failed', error: 'no rows from extract' }, engine.clock.now());
  const release = await lockedByOperator(up);
  try {
    // Before, its turn was waited for until the statement timeout (30 s), each tick: every run finishing meanwhile waited too.
    expect(await within(5_000, 'poller tick', pollFinishedRuns(engine.deps))).toBe(false);
    expect((await t.db.selectFrom('runs').select('processedAt').where('id', '=', run.id).executeTakeFirstOrThrow()).processedAt).toBeNull();
  } finally {
    await release();
  }
  expect(await pollFinishedRuns(engine.deps)).toBe(true);
  expect(await t.db.selectFrom('alerts').select('status').where('workflowId', '=', down.id).execute()).toEqual([{ status: 'open' }]);
});

it('reports: a workflow held by an operator answers its own reports 503 within seconds and holds no other workflow\'s', async () => {
  const ADMIN = 'admin-token-0123456789abcdef';
  const held = await makeWorkflow(t.db, { tenantId: 'acme', name: 'hourly-held', cron: '0 * * * *' });
  await makeWorkflow(t.db, { tenantId: 'acme', name: 'hourly-free', cron: '0 * * * *' });
  // The API's pool, as a replica has it: 10 connections (src/open-database.ts).
  const app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock: systemClock });
  const post = (workflow: string, hour: number) =>
    fetch(`${app.url}/api/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenant: 'acme', workflow, status: 'succeeded', tick: `2026-03-10T${String(hour).padStart(2, '0')}:00:00Z`, externalId: `${workflow}:${hour}` }),
    });
  const release = await lockedByOperator(held);
  try {
    // A job resending its reports for the held workflow, more of them than the pool has connections.
    const waiting = Array.from({ length: 12 }, (_, hour) => post('hourly-held', hour));
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Before, they held every connection of the pool until the statement timeout (30 s), and this waited behind them.
    const free = await within(8_000, 'a report for another workflow', post('hourly-free', 1));
    expect(free.status).toBe(201);
    const answers = await within(8_000, 'the held workflow\'s reports', Promise.all(waiting));
    for (const a of answers) {
      expect(a.status).toBe(503);
      expect(a.headers.get('retry-after')).toBe('5');
      expect(await a.json()).toMatchObject({ error: 'database_unavailable', reason: 'lock_timeout' });
    }
  } finally {
    await release();
  }
  expect((await post('hourly-held', 0)).status).toBe(201);
  await app.stop();
}, 60_000);
