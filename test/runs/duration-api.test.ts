import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';

/** Run duration over the API (issue 16): durations kept and shown, the duration fields of a workflow validated. */
const ADMIN = 'admin-token-0123456789abcdef';

let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
let clock: ManualClock;
let admin: ReturnType<typeof apiClient>;

beforeAll(async () => {
  t = await createTestDatabase();
  clock = new ManualClock('2026-03-10T02:05:20Z');
  await makeTenant(t.db);
  await makeWorkflow(t.db, { name: 'nightly', cron: '0 2 * * *' });
  app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock });
  admin = apiClient(app.url, ADMIN);
});
afterAll(async () => {
  await app.stop();
  await t.drop();
});

describe('run durations over the API', () => {
  it('keeps the duration of a run from its start report to its end, and a finish-only report’s own duration', async () => {
    const started = await admin('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'nightly', status: 'running' });
    expect(started.status).toBe(201);
    clock.advance(20 * 60_000);
    expect((await admin('POST', `/api/v1/runs/${started.body.id}`, { status: 'succeeded' })).status).toBe(200);
    const detail = await admin('GET', `/api/v1/runs/${started.body.id}`);
    expect(detail.body).toMatchObject({ durationSeconds: 1200, normalDuration: null, runningLongSince: null });
    expect(detail.body.attempts).toEqual([expect.objectContaining({ durationSeconds: 1200 })]);

    const reported = await admin('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'nightly', status: 'succeeded', durationSeconds: 90.5 });
    expect(reported.status).toBe(201);
    expect(reported.body.durationSeconds).toBe(90.5);
    const list = await admin('GET', '/api/v1/runs?workflow=nightly');
    expect(list.body.runs.map((r: { durationSeconds: number }) => r.durationSeconds)).toEqual([90.5, 1200]);
  });

  it('refuses a duration on a start report and a negative one, naming the field', async () => {
    const running = await admin('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'nightly', status: 'running', durationSeconds: 5 });
    expect(running.status).toBe(400);
    expect(running.body.message).toContain('durationSeconds');
    const negative = await admin('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'nightly', status: 'succeeded', durationSeconds: -1 });
    expect(negative.status).toBe(400);
    expect(negative.body.message).toMatch(/durationSeconds.*\(got -1\)/);
  });

  it('validates completeBy and minDurationSeconds like the workflows file, and shows them with the normal duration', async () => {
    const bad = await admin('PUT', '/api/v1/workflows/acme/export', { cron: '0 2 * * *', policy: { completeBy: { time: '25:00', timeZone: 'Mars/Olympus' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/policy\.completeBy\.time: .*HH:MM.*\(got "25:00"\)/);
    expect(bad.body.message).toMatch(/policy\.completeBy\.timeZone: .*IANA.*\(got "Mars\/Olympus"\)/);
    const good = await admin('PUT', '/api/v1/workflows/acme/export', { cron: '0 2 * * *', timezone: 'Europe/Berlin', policy: { completeBy: { time: '06:00' }, minDurationSeconds: 30 } });
    expect([200, 201]).toContain(good.status);
    const view = await admin('GET', '/api/v1/workflows/acme/export');
    expect(view.body.profile.effective).toMatchObject({ completeBy: { time: '06:00' }, minDurationSeconds: 30, runningLongAfterSeconds: null });
    expect(view.body.duration).toEqual({ normal: null, runningLongAfterSeconds: null });
  });
});
