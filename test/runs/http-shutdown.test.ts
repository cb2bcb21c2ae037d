import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createHttpLauncher } from '../../src/launch/http-launcher.js';
import { HeldRuns } from '../../src/ledger/run-leases.js';
import { SHUTTING_DOWN } from '../../src/launch/in-flight.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeRun, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { startHttpTarget } from '../helpers/http-target.js';
import { eventually, replicaDeps } from './support.js';

/**
 * A replica stopping while an http launch waits for its answer (a sync run,
 * a callback target not yet accepting) gives it the shutdown grace, as it
 * does a command, then records it interrupted: never left running under a
 * lease nobody renews, to be failed as "worker lost" a lease later.
 */

let t: TestDatabase;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
const clock = new ManualClock('2026-03-10T02:00:00Z');
beforeAll(async () => {
  t = await createTestDatabase();
  target = await startHttpTarget();
  await makeTenant(t.db);
});
afterAll(async () => {
  await target.stop();
  await t.drop();
});

async function start(launcher: ReturnType<typeof createHttpLauncher>, path: string, mode: 'sync' | 'callback') {
  const workflow = await makeWorkflow(t.db, { mode: 'managed', launcher: JSON.stringify({ kind: 'http', url: `${target.url}${path}`, mode, secret: 'shutdown-secret-0123456789', operatorSet: true }) });
  const run = await makeRun(t.db, { workflowId: workflow.id, tick: at('2026-03-10T02:00:00Z'), status: 'running', finishedAt: null });
  const before = target.received.length;
  await launcher.launch({ runId: run.id, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: run.tick, attempt: 1, trigger: 'schedule', timeoutSeconds: 300 });
  await eventually(() => target.received.slice(before).some((r) => r.url === path));
  return run;
}

const row = (id: number) => t.db.selectFrom('runs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('a replica shutting down with http launches waiting for their answer', () => {
  it('lets an answer that comes within the grace end the run as it says', async () => {
    target.respondWith((r) => ({ status: 200, delayMs: r.url === '/soon' ? 300 : 0, body: '{"rows": 5}' }));
    const launcher = createHttpLauncher(replicaDeps(t.db, clock), new HeldRuns());
    const run = await start(launcher, '/soon', 'sync');
    await launcher.shutdown(10_000);
    // Once shutdown is over nothing is left waiting: the run has ended.
    expect(await row(run.id)).toMatchObject({ status: 'succeeded', rows: 5, leaseOwner: null });
  });

  it('records a sync run and a callback launch still unanswered after the grace interrupted, and drops their requests', async () => {
    target.respondWith(() => ({ status: 200, delayMs: 60_000 }));
    const launcher = createHttpLauncher(replicaDeps(t.db, clock), new HeldRuns());
    const sync = await start(launcher, '/stuck-sync', 'sync');
    const callback = await start(launcher, '/stuck-accept', 'callback');
    await launcher.shutdown(100);
    const error = "interrupted: the scheduler-bot replica waiting for the target's answer shut down (the target may still be running it)";
    expect(await row(sync.id)).toMatchObject({ status: 'failed', error });
    expect(await row(callback.id)).toMatchObject({ status: 'failed', error });
  });

  it("records a launch waiting out a target's Retry-After interrupted after the grace, and does not send it again", async () => {
    target.respondWith((r) => (r.url === '/waiting' ? { status: 429, body: 'slow down', headers: { 'retry-after': '120' } } : { status: 200 }));
    const launcher = createHttpLauncher(replicaDeps(t.db, clock), new HeldRuns());
    const run = await start(launcher, '/waiting', 'sync');
    await eventually(() => clock.nextWake() !== undefined);
    await launcher.shutdown(100);
    expect(await row(run.id)).toMatchObject({ status: 'failed', error: "interrupted: the scheduler-bot replica waiting for the target's answer shut down (the target may still be running it)" });
    clock.advance(120_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(target.received.filter((r) => r.url === '/waiting')).toHaveLength(1);
  });

  it('sends nothing once it has shut down: a launch asked for after its grace is refused, saying why', async () => {
    const launcher = createHttpLauncher(replicaDeps(t.db, clock), new HeldRuns());
    await launcher.shutdown(1_000);
    const workflow = await makeWorkflow(t.db, { mode: 'managed', launcher: JSON.stringify({ kind: 'http', url: `${target.url}/late`, secret: 'shutdown-secret-0123456789', operatorSet: true }) });
    const outcome = await launcher.launch({ runId: 1, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: null, attempt: 1, trigger: 'manual', timeoutSeconds: 30 });
    expect(outcome).toEqual({ started: false, error: SHUTTING_DOWN });
    expect(target.received.some((r) => r.url === '/late')).toBe(false);
  });
});
