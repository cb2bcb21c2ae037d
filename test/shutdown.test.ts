import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPool } from '../src/db/connect.js';
import { startTestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { eventually } from './helpers/eventually.js';
import { at, makeRun, makeTenant, makeWorkflow } from './helpers/factories.js';
import { apiClient } from './helpers/http-api.js';
import { CountingClock } from './runs/support.js';
import { failOverdueRuns } from '../src/engine/freshness.js';
import { LEASE_RENEW_INTERVAL_MS } from '../src/ledger/run-leases.js';
import { RUN_LEASE_MS } from '../src/ledger/runs.js';

const ADMIN = 'admin-token-0123456789abcdef';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase(4);
});
afterAll(async () => t.drop());

it('a report in flight when the replica stops is answered, not cut off', async () => {
  await makeTenant(t.db);
  await makeWorkflow(t.db, { name: 'nightly', cron: '0 2 * * *' });
  const app = await startTestApp(t, { API_TOKEN: ADMIN });
  // Hold the runs table, so the report is in flight (waiting on the lock) when the replica is told to stop.
  const locker = createPool(t.url, 1);
  const holder = await locker.connect();
  let stopping: Promise<unknown> | undefined;
  try {
    await holder.query('begin');
    await holder.query('lock table runs in exclusive mode');
    const report = apiClient(app.url, ADMIN)('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'nightly', status: 'succeeded', tick: '2026-03-10T02:00:00Z', externalId: 'nightly:1' });
    await eventually(async () => {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(t.db);
      expect(rows[0]!.n).toBeGreaterThan(0);
    });
    stopping = app.stop();
    // Stopping waits for it: released only now, the report still gets its answer.
    await holder.query('commit');
    const answer = await report;
    expect(answer.status).toBe(201);
    await stopping;
    expect(await t.db.selectFrom('runs').select('externalId').execute()).toEqual([{ externalId: 'nightly:1' }]);
  } finally {
    await holder.query('rollback').catch(() => {});
    holder.release();
    await locker.end();
    await (stopping ?? app.stop());
  }
});

it('while its commands finish, a stopping replica answers /readyz with 503, so the load balancer sends it nothing new', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-stop-'));
  const release = join(dir, 'release');
  const workflow = await makeWorkflow(t.db, { name: 'managed', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: `while [ ! -e ${release} ]; do sleep 0.05; done; echo done` }) });
  const app = await startTestApp(t, { SHUTDOWN_GRACE_SECONDS: '120' });
  let stopping: Promise<unknown> | undefined;
  try {
    const run = await makeRun(t.db, { workflowId: workflow.id, tick: at('2026-03-10T02:00:00Z'), status: 'running', finishedAt: null });
    const launcher = app.deps.launchers(workflow)!;
    expect(await launcher.launch({ runId: run.id, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: new Date('2026-03-10T02:00:00Z'), attempt: 1, trigger: 'schedule', timeoutSeconds: 600 })).toEqual({ started: true });
    expect((await fetch(`${app.url}/readyz`)).status).toBe(200);
    stopping = app.stop();
    await eventually(async () => {
      const answer = await fetch(`${app.url}/readyz`);
      expect(answer.status).toBe(503);
      expect(await answer.json()).toMatchObject({ ready: false, stopping: true });
    });
    await writeFile(release, '');
    // What the last log line tells: the run in flight ended within the grace.
    expect(await stopping).toEqual({ runsInFlight: 1, runsEnded: 1, runsInterrupted: 0, runsLeftRunning: 0, notificationsPending: 0, notificationsLeased: 0 });
    expect(await t.db.selectFrom('runs').select(['status', 'logExcerpt']).where('id', '=', run.id).executeTakeFirstOrThrow()).toEqual({ status: 'succeeded', logExcerpt: 'done\n' });
  } finally {
    await writeFile(release, '').catch(() => {});
    await (stopping ?? app.stop());
    await rm(dir, { recursive: true, force: true });
  }
});

it('a command running on through a grace longer than its lease keeps its lease renewed, so no other replica fails it as "worker lost" meanwhile', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-stop-lease-'));
  const release = join(dir, 'release');
  const workflow = await makeWorkflow(t.db, { name: 'long-grace', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: `while [ ! -e ${release} ]; do sleep 0.05; done; echo done` }) });
  const clock = new CountingClock('2026-03-10T02:00:30Z');
  const app = await startTestApp(t, { SHUTDOWN_GRACE_SECONDS: '600' }, { clock, loops: true, databaseUrl: undefined });
  let stopping: Promise<unknown> | undefined;
  try {
    const run = await makeRun(t.db, { workflowId: workflow.id, tick: at('2026-03-10T02:00:00Z'), status: 'running', finishedAt: null });
    const launcher = app.deps.launchers(workflow)!;
    expect(await launcher.launch({ runId: run.id, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: new Date('2026-03-10T02:00:00Z'), attempt: 1, trigger: 'schedule', timeoutSeconds: 3600 })).toEqual({ started: true });
    const renewal = app.loops.find((l) => l.status.name === 'run-lease-renewal')!;
    await eventually(() => expect(renewal.status.ticks).toBeGreaterThan(0));
    stopping = app.stop();
    await eventually(async () => expect((await fetch(`${app.url}/readyz`)).status).toBe(503));
    // Twice the lease on this replica's clock, while the command still runs in the grace: each renewal moves the lease on.
    const lease = () => t.db.selectFrom('runs').select(['status', 'leaseOwner', 'leaseExpiresAt']).where('id', '=', run.id).executeTakeFirstOrThrow();
    for (let passed = 0; passed < 2 * RUN_LEASE_MS; passed += LEASE_RENEW_INTERVAL_MS) {
      const ticks = renewal.status.ticks;
      clock.advance(LEASE_RENEW_INTERVAL_MS);
      await eventually(() => expect(renewal.status.ticks).toBeGreaterThan(ticks));
      // Another replica's freshness check at this instant finds nothing to fail.
      await failOverdueRuns({ db: t.db }, clock.now());
      expect(await lease()).toEqual({ status: 'running', leaseOwner: app.deps.replicaId, leaseExpiresAt: new Date(clock.now().getTime() + RUN_LEASE_MS) });
    }
    await writeFile(release, '');
    await stopping;
    expect(await t.db.selectFrom('runs').select(['status', 'error']).where('id', '=', run.id).executeTakeFirstOrThrow()).toEqual({ status: 'succeeded', error: null });
    // Ended with the commands: lease renewal has stopped too.
    await renewal.done;
  } finally {
    await writeFile(release, '').catch(() => {});
    await (stopping ?? app.stop());
    await rm(dir, { recursive: true, force: true });
  }
});

it('a command still running when the grace ends is interrupted, and the stop says so', async () => {
  const workflow = await makeWorkflow(t.db, { name: 'endless', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'sleep 600' }) });
  const app = await startTestApp(t, { SHUTDOWN_GRACE_SECONDS: '1' });
  const run = await makeRun(t.db, { workflowId: workflow.id, tick: at('2026-03-10T02:00:00Z'), status: 'running', finishedAt: null });
  const launcher = app.deps.launchers(workflow)!;
  expect(await launcher.launch({ runId: run.id, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: new Date('2026-03-10T02:00:00Z'), attempt: 1, trigger: 'schedule', timeoutSeconds: 600 })).toEqual({ started: true });
  expect(await app.stop()).toMatchObject({ runsInFlight: 1, runsEnded: 0, runsInterrupted: 1, runsLeftRunning: 0 });
  expect(await t.db.selectFrom('runs').select(['status', 'error']).where('id', '=', run.id).executeTakeFirstOrThrow()).toMatchObject({ status: 'failed', error: expect.stringMatching(/^interrupted: /) });
});
