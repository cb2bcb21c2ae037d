import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { fireDueTicks } from '../../src/engine/tick-scheduler.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { startHttpTarget } from '../helpers/http-target.js';
import { replicaDeps, settledRuns } from './support.js';

/**
 * An http launch refused before anything is sent (the address policy, a missing signing secret) is permanent
 * like a 4xx answer (src/domain/launch-answer.ts): the run fails at once naming why, and its tick gets no
 * retry, whatever its budget. A name that does not resolve at all is a network fault: retried. End to end:
 * the real launcher, the engine's poller and retry engine, a real database.
 */

const SECRET = 'tenant-launch-secret-0123456789';

let t: TestDatabase;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
  target = await startHttpTarget();
  target.respondWith(() => ({ status: 200 }));
});
afterAll(async () => {
  await target.stop();
  await t.drop();
});

/** An hourly managed workflow (2 retries a tick) whose launcher is the one given, due at `tick`. */
async function hourly(launcher: Record<string, unknown>, tick: string, env: Record<string, string> = {}) {
  const deps = replicaDeps(t.db, new ManualClock(tick), { HTTP_LAUNCHER_ALLOWED_HOSTS: 'localhost,does-not-exist.invalid', ...env });
  const wf = await makeWorkflow(t.db, { cron: '0 * * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'http', mode: 'sync', ...launcher }), nextTickAt: at(tick) });
  await fireDueTicks(deps);
  return settledRuns(t.db, deps, wf.id);
}

describe('an http launch refused before it is sent is not retried', () => {
  it("a tenant's launcher to a host not on the allow-list: one attempt, the host named (never the URL's query)", async () => {
    const rows = await hourly({ url: 'https://jobs.elsewhere.example/run?token=query-secret-0123456789', secret: SECRET }, '2026-03-10T03:00:00Z');
    expect(rows.map((r) => [r.attempt, r.status, r.error])).toEqual([
      [1, 'failed', "launch refused: host jobs.elsewhere.example is not on the operator's allow-list for tenant acme (permanent: not retried)"],
    ]);
  });

  it("an allowed name that resolves to a non-public address: refused at connect time, nothing sent, one attempt", async () => {
    const before = target.received.length;
    const rows = await hourly({ url: `http://localhost:${new URL(target.url).port}/run`, secret: SECRET }, '2026-03-10T04:00:00Z');
    expect(rows.map((r) => [r.attempt, r.status])).toEqual([[1, 'failed']]);
    expect(rows[0]!.error).toMatch(/^launch refused: localhost resolves to (127\.0\.0\.1|::1), a non-public address the operator has not allowed \(permanent: not retried\)$/);
    expect(target.received.length).toBe(before);
  });

  it("a tenant's launcher without a secret of its own, and the operator's without LAUNCHER_SECRET: one attempt each", async () => {
    const tenants = await hourly({ url: 'http://localhost/run' }, '2026-03-10T05:00:00Z');
    expect(tenants.map((r) => [r.attempt, r.status])).toEqual([[1, 'failed']]);
    expect(tenants[0]!.error).toMatch(/^launch refused: no signing secret of its own: .* \(permanent: not retried\)$/);
    const operators = await hourly({ url: `${target.url}/operator`, operatorSet: true }, '2026-03-10T06:00:00Z');
    expect(operators.map((r) => [r.attempt, r.status, r.error])).toEqual([[1, 'failed', 'launch refused: no signing secret: set LAUNCHER_SECRET or the launcher\'s "secret" (permanent: not retried)']]);
    expect(target.received.filter((r) => r.url === '/operator')).toHaveLength(0);
  });

  it('a name that does not resolve is a network fault: retried per the budget (3 attempts)', async () => {
    const rows = await hourly({ url: 'http://does-not-exist.invalid/run', secret: SECRET }, '2026-03-10T07:00:00Z');
    expect(rows.map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(rows[0]).toMatchObject({ status: 'failed', outcomeNote: 'failed on all 3 attempts' });
    expect(rows[0]!.error).toMatch(/^request failed: .*ENOTFOUND|EAI_AGAIN/);
  });

  it('a retry refused before it is sent ends the tick there, saying so', async () => {
    // The first attempt reaches a target that is down (transient); by the retry the operator has taken the host off the list.
    const deps = replicaDeps(t.db, new ManualClock('2026-03-10T08:00:00Z'), { HTTP_LAUNCHER_ALLOWED_HOSTS: '127.0.0.1' });
    target.respondWith((r) => (r.url === '/flaky' ? { status: 503, body: 'down' } : { status: 200 }));
    const wf = await makeWorkflow(t.db, { cron: '0 * * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'http', mode: 'sync', url: `${target.url}/flaky`, secret: SECRET }), nextTickAt: at('2026-03-10T08:00:00Z') });
    await fireDueTicks(deps);
    const narrowed = replicaDeps(t.db, deps.clock as ManualClock, { HTTP_LAUNCHER_ALLOWED_HOSTS: 'jobs.example.com' });
    const rows = await settledRuns(t.db, narrowed, wf.id);
    expect(rows.map((r) => [r.attempt, r.attemptStatus])).toEqual([[1, 'failed'], [2, 'failed']]);
    expect(rows[0]).toMatchObject({
      status: 'failed',
      error: "launch refused: host 127.0.0.1 is not on the operator's allow-list for tenant acme (permanent: not retried)",
      outcomeNote: 'failed on attempt 2; not retried (refused before sending)',
    });
  });
});
