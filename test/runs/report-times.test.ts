import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, type Engine, stepUntil } from '../helpers/engine-harness.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { startTestApp } from '../helpers/app.js';

/**
 * Reports whose times are not the moment they arrive, through the HTTP API
 * and the real engine on a ManualClock: a tick named far in the past or
 * future, an end that says how long it took, a start sent twice.
 */

const ADMIN = 'admin-token-report-times-0123456789';
let t: TestDatabase;
let engine: Engine;
let app: Awaited<ReturnType<typeof startTestApp>>;

beforeEach(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
});
afterEach(async () => {
  await app.stop();
  await t.drop();
});

async function boot(start: string) {
  engine = createEngine(t.db, start);
  app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock: engine.clock });
}
const tickRows = async (workflowId: number) =>
  (await t.db.selectFrom('runs').select(['tick', 'status', 'startedAt']).where('workflowId', '=', workflowId).orderBy('id').execute()).map(
    (r) => `${r.tick?.toISOString().slice(11, 16) ?? 'none'} ${r.status} started ${r.startedAt?.toISOString().slice(11, 19) ?? '-'}`,
  );
const alerts = () => t.db.selectFrom('alerts').selectAll().execute();
const report = async (body: Record<string, unknown>) => {
  const r = await fetch(`${app.url}/api/v1/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 'acme', ...body }),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: r.status, body: (await r.json()) as { error?: string; message?: string; tick?: string } };
};
const ping = async (key: string, signal = '') => (await fetch(`${app.url}/ping/${key}${signal}`, { method: 'POST' })).status;

describe('a report naming a tick far from now', () => {
  it('is a 400 naming body.tick, answered at once, for a tick before 1970 (year 1 held the process) or still to come; a past tick is a backfill', async () => {
    await boot('2026-03-10T08:00:00Z');
    const wf = await makeWorkflow(t.db, { name: 'hourly', cron: '0 * * * *', mode: 'observed', nextTickAt: at('2026-03-10T09:00:00Z') });
    // Year 1 sent the fire-time search into a loop that held the whole process (JavaScript reads years 0-99 as 19xx).
    for (const tick of ['0001-01-01T00:00:00Z', '0050-06-01T00:00:00Z']) {
      const answer = await report({ workflow: 'hourly', status: 'failed', tick });
      expect(answer.status, tick).toBe(400);
      expect((answer.body as { issues?: string[] }).issues, tick).toEqual([`body: tick: must be 1970-01-01T00:00:00.000Z or later (got ${JSON.stringify(tick)})`]);
    }
    const future = await report({ workflow: 'hourly', status: 'failed', tick: '9999-12-31T23:00:00Z' });
    expect(future).toMatchObject({ status: 400, body: { message: 'body.tick: 9999-12-31T23:00:00.000Z has not come yet' } });
    // A past tick is still a report of it (a backfill).
    expect((await report({ workflow: 'hourly', status: 'succeeded', tick: '2026-03-01T07:00:00Z' })).status).toBe(201);
    expect(await tickRows(wf.id)).toEqual(['07:00 succeeded started 08:00:00']);
    expect(await alerts()).toEqual([]);
  });
});

describe('an end reported with its duration', () => {
  it('is the run of the tick it started at, even when it ends after the next tick: each tick its own run, none left missed', async () => {
    await boot('2026-03-10T08:59:00Z');
    // Every 15 minutes (grace 90 s), the job takes 17 minutes and reports only its end, with how long it took.
    const wf = await makeWorkflow(t.db, { name: 'quarterly', cron: '*/15 * * * *', mode: 'observed', nextTickAt: at('2026-03-10T09:00:00Z') });
    for (let i = 0; i < 4; i++) {
      await stepUntil(engine, new Date(Date.parse('2026-03-10T09:17:00Z') + i * 15 * 60_000), 30_000);
      const answer = await report({ workflow: 'quarterly', status: 'succeeded', durationSeconds: 17 * 60 });
      expect(answer).toMatchObject({ status: 201, body: { tick: new Date(Date.parse('2026-03-10T09:00:00Z') + i * 15 * 60_000).toISOString() } });
    }
    await stepUntil(engine, at('2026-03-10T10:05:00Z'), 30_000);
    // Each tick was recorded missed at tick + 90 s, then its run's end took the row over; the next tick's is still to come.
    expect(await tickRows(wf.id)).toEqual([
      '09:00 succeeded started 09:00:00',
      '09:15 succeeded started 09:15:00',
      '09:30 succeeded started 09:30:00',
      '09:45 succeeded started 09:45:00',
      '10:00 missed started -',
    ]);
  });
});

describe('a ping start without a rid sent twice (curl --retry after a lost answer)', () => {
  it('is one run, ended by the job\'s one end: nothing times out, nothing opens', async () => {
    await boot('2026-03-10T08:59:00Z');
    const wf = await makeWorkflow(t.db, { name: 'daily', cron: '0 9 * * *', mode: 'observed', nextTickAt: at('2026-03-10T09:00:00Z') });
    await stepUntil(engine, at('2026-03-10T09:00:05Z'), 5_000);
    expect(await ping(wf.pingKey!, '/start')).toBe(200);
    engine.clock.advance(3_000);
    expect(await ping(wf.pingKey!, '/start')).toBe(200);
    await stepUntil(engine, at('2026-03-10T09:20:00Z'));
    expect(await ping(wf.pingKey!)).toBe(200);
    // Past the daily timeout (6 h): a second running row would have been failed "timed out" by now.
    await stepUntil(engine, at('2026-03-10T16:00:00Z'), 10 * 60_000);
    expect(await tickRows(wf.id)).toEqual(['09:00 succeeded started 09:00:05']);
    expect(await alerts()).toEqual([]);

    // The next day's start is that day's run, not a repeat of a finished one.
    await stepUntil(engine, at('2026-03-11T09:00:10Z'), 30 * 60_000);
    expect(await ping(wf.pingKey!, '/start')).toBe(200);
    expect((await tickRows(wf.id))[1]).toBe('09:00 running started 09:00:10');
  });

  it('a start whose tick already ended is a run outside the tick (a rerun), as before', async () => {
    await boot('2026-03-10T08:59:00Z');
    const wf = await makeWorkflow(t.db, { name: 'daily2', cron: '0 9 * * *', mode: 'observed', nextTickAt: at('2026-03-10T09:00:00Z') });
    engine.clock.set(at('2026-03-10T09:00:05Z'));
    await ping(wf.pingKey!, '/start');
    await ping(wf.pingKey!, '/fail');
    await ping(wf.pingKey!, '/start');
    await ping(wf.pingKey!);
    expect(await tickRows(wf.id)).toEqual(['09:00 failed started 09:00:05', 'none succeeded started 09:00:05']);
  });
});
