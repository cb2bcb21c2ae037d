import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { fireDueTicks } from '../../src/engine/tick-scheduler.js';
import { rememberStoredSecrets } from '../../src/services/stored-secrets.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { startHttpTarget } from '../helpers/http-target.js';
import { eventually, replicaDeps, settledRuns } from './support.js';

/**
 * Which answers of an http launch's target are retried (src/domain/launch-answer.ts), end to end: a real
 * local HTTP server answers, the real launcher sends, the engine's poller and retry engine decide.
 */

const CI_TOKEN = 'ci-token-0123456789abcdef';

let t: TestDatabase;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
  target = await startHttpTarget();
});
afterAll(async () => {
  await target.stop();
  await t.drop();
});

/** An hourly managed workflow (2 retries a tick) whose http launcher POSTs to the local target under `path`. */
async function hourly(path: string, tick: string, mode: 'sync' | 'callback' = 'sync') {
  const clock = new ManualClock(tick);
  const deps = replicaDeps(t.db, clock, { HTTP_LAUNCHER_ALLOWED_HOSTS: '127.0.0.1' });
  const wf = await makeWorkflow(t.db, {
    cron: '0 * * * *',
    mode: 'managed',
    launcher: JSON.stringify({ kind: 'http', url: `${target.url}${path}`, mode, secret: 'launcher-secret-0123456789', headers: { authorization: `Bearer ${CI_TOKEN}` } }),
    nextTickAt: at(tick),
  });
  // What a replica does at start and whenever a launcher is stored: its redactor learns the launcher's secrets.
  await rememberStoredSecrets(t.db);
  return { clock, deps, wf, sent: () => target.received.filter((r) => r.url === path) };
}

const settle = (deps: ReturnType<typeof replicaDeps>, workflowId: number) => settledRuns(t.db, deps, workflowId);

describe("an http launch's answer decides whether its tick is retried", () => {
  it.each([400, 401, 403, 404, 405, 409, 410, 422])('HTTP %i is permanent: one request, the tick failed at once with the status and the answer, no retry', async (status) => {
    const path = `/refused/${status}`;
    // A target that echoes the request it refused, credential included.
    target.respondWith((r) => (r.url === path ? { status, body: `job rejected: bad field\nyou sent: authorization: ${r.headers.authorization}` } : { status: 200 }));
    const { deps, wf, sent } = await hourly(path, '2026-03-10T03:00:00Z');
    await fireDueTicks(deps);
    const rows = await settle(deps, wf.id);
    expect(sent()).toHaveLength(1);
    expect(rows.map((r) => [r.attempt, r.status])).toEqual([[1, 'failed']]);
    expect(rows[0]!.error).toBe(`HTTP ${status}: job rejected: bad field (permanent: not retried)`);
    // The answer's excerpt is kept, its credential-like value redacted.
    expect(rows[0]!.logExcerpt).toContain('job rejected: bad field');
    expect(rows[0]!.logExcerpt).not.toContain(CI_TOKEN);
  });

  it('a callback target refusing the launch (422) is permanent too: one request, no retry', async () => {
    const path = '/callback-refused';
    target.respondWith((r) => (r.url === path ? { status: 422, body: '{"error":"unknown job"}' } : { status: 200 }));
    const { deps, wf, sent } = await hourly(path, '2026-03-10T08:00:00Z', 'callback');
    await fireDueTicks(deps);
    const rows = await settle(deps, wf.id);
    expect(sent()).toHaveLength(1);
    expect(rows.map((r) => [r.attempt, r.status, r.error])).toEqual([[1, 'failed', 'HTTP 422: {"error":"unknown job"} (permanent: not retried)']]);
  });

  it.each([500, 503, 408, 425, 429])('HTTP %i without a Retry-After is transient: retried per the budget (3 attempts), the verdict the last answer', async (status) => {
    const path = `/busy/${status}`;
    target.respondWith((r) => (r.url === path ? { status, body: 'busy' } : { status: 200 }));
    const { deps, wf, sent } = await hourly(path, '2026-03-10T04:00:00Z');
    await fireDueTicks(deps);
    const rows = await settle(deps, wf.id);
    expect(sent()).toHaveLength(3);
    expect(rows.map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(rows[0]).toMatchObject({ status: 'failed', error: `HTTP ${status}: busy`, outcomeNote: 'failed on all 3 attempts' });
  });

  it('a retry that gets a permanent answer ends the tick there', async () => {
    const path = '/gone-after-503';
    let n = 0;
    target.respondWith((r) => (r.url === path ? (++n === 1 ? { status: 503, body: 'restarting' } : { status: 410, body: 'job deleted' }) : { status: 200 }));
    const { deps, wf, sent } = await hourly(path, '2026-03-10T05:00:00Z');
    await fireDueTicks(deps);
    const rows = await settle(deps, wf.id);
    expect(sent()).toHaveLength(2);
    expect(rows.map((r) => [r.attempt, r.attemptStatus])).toEqual([[1, 'failed'], [2, 'failed']]);
    expect(rows[0]).toMatchObject({ status: 'failed', error: 'HTTP 410: job deleted (permanent: not retried)', outcomeNote: 'failed on attempt 2; not retried (a permanent answer)' });
  });

  it("a 429 with a Retry-After inside the run's deadline is sent again then, in the same attempt, signed afresh", async () => {
    const path = '/rate-limited';
    let n = 0;
    target.respondWith((r) => (r.url === path ? (++n === 1 ? { status: 429, body: 'slow down', headers: { 'retry-after': '30' } } : { status: 200, body: '{"rows":5}' }) : { status: 200 }));
    const { clock, deps, wf, sent } = await hourly(path, '2026-03-10T06:00:00Z');
    await fireDueTicks(deps);
    await eventually(() => sent().length === 1 && clock.nextWake()?.getTime() === at('2026-03-10T06:00:30Z').getTime());
    // Nothing is sent again before the wait is over.
    clock.advance(29_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(sent()).toHaveLength(1);
    clock.advance(1_000);
    const rows = await settle(deps, wf.id);
    expect(sent()).toHaveLength(2);
    expect(rows.map((r) => [r.attempt, r.status, r.rows])).toEqual([[1, 'succeeded', 5]]);
    const stamps = sent().map((r) => Number(r.headers['x-scheduler-timestamp']));
    expect(stamps[1]! - stamps[0]!).toBe(30);
  });

  it('a run that ended or became another replica\'s during the wait is not sent again (the lease is taken again before each send)', async () => {
    const path = '/rate-limited-then-lost';
    target.respondWith((r) => (r.url === path ? { status: 429, body: 'slow down', headers: { 'retry-after': '30' } } : { status: 200 }));
    const { clock, deps, wf, sent } = await hourly(path, '2026-03-10T09:00:00Z');
    await fireDueTicks(deps);
    await eventually(() => sent().length === 1 && clock.nextWake() !== undefined);
    // This replica stalled past its lease; another failed the run as worker lost.
    await t.db.updateTable('runs').set({ status: 'failed', error: 'worker lost', leaseOwner: null, finishedAt: clock.now() }).where('workflowId', '=', wf.id).execute();
    clock.advance(30_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(sent()).toHaveLength(1);
    const row = await t.db.selectFrom('runs').select(['status', 'error']).where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'failed', error: 'worker lost' });
  });

  it("a Retry-After past the run's deadline is not waited for: the attempt fails with the answer and the budget decides", async () => {
    const path = '/rate-limited-long';
    target.respondWith((r) => (r.url === path ? { status: 429, body: 'quota exhausted', headers: { 'retry-after': '600' } } : { status: 200 }));
    const { deps, wf, sent } = await hourly(path, '2026-03-10T07:00:00Z');
    await t.db.updateTable('workflows').set({ policy: JSON.stringify({ timeoutSeconds: 300, retries: 0 }) }).where('id', '=', wf.id).execute();
    await fireDueTicks(deps);
    const rows = await settle(deps, wf.id);
    expect(sent()).toHaveLength(1);
    expect(rows.map((r) => [r.attempt, r.status, r.error])).toEqual([[1, 'failed', 'HTTP 429: quota exhausted']]);
  });
});
