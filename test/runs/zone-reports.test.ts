import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';

/**
 * Reports from jobs in other zones: a reporter names its tick in its own
 * local time with an offset, or in UTC, and both are the same tick; a zone
 * the API is given that is no zone is refused, naming the field and the value.
 */

const ADMIN = 'admin-token-0123456789abcdef';

let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
let clock: ManualClock;
let admin: ReturnType<typeof apiClient>;

beforeAll(async () => {
  t = await createTestDatabase();
  // 09:10 in Kathmandu (+05:45), 08:55 in Kolkata (+05:30), 17:25 in Kiritimati (+14), 16:10 in Chatham (+12:45), 00:55 in St. John's (−02:30).
  clock = new ManualClock('2026-06-15T03:25:00Z');
  await makeTenant(t.db);
  app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock });
  admin = apiClient(app.url, ADMIN);
});
afterAll(async () => {
  await app.stop();
  await t.drop();
});

const report = (workflow: string, body: Record<string, unknown>) => admin('POST', '/api/v1/runs', { tenant: 'acme', workflow, status: 'succeeded', ...body });

describe('a tick named in local time with an offset, or in UTC', () => {
  const CASES = [
    // zone, cron, the tick as the job's host writes it, the same tick in UTC, a tick with the wrong half-hour
    { tz: 'Asia/Kathmandu', cron: '0 9 * * *', local: '2026-06-15T09:00:00+05:45', utc: '2026-06-15T03:15:00Z', wrong: '2026-06-15T09:00:00+05:30' },
    { tz: 'Asia/Kolkata', cron: '0 * * * *', local: '2026-06-15T08:00:00+05:30', utc: '2026-06-15T02:30:00Z', wrong: '2026-06-15T08:00:00+05:45' },
    { tz: 'Pacific/Chatham', cron: '0 * * * *', local: '2026-06-15T16:00:00+12:45', utc: '2026-06-15T03:15:00Z', wrong: '2026-06-15T16:00:00+12:00' },
    { tz: 'America/St_Johns', cron: '30 0 * * *', local: '2026-06-15T00:30:00-02:30', utc: '2026-06-15T03:00:00Z', wrong: '2026-06-15T00:30:00-03:30' },
    { tz: 'Pacific/Kiritimati', cron: '0 17 * * *', local: '2026-06-15T17:00:00+14:00', utc: '2026-06-15T03:00:00Z', wrong: '2026-06-14T17:00:00+13:00' },
    { tz: 'Etc/GMT+5', cron: '0 22 * * *', local: '2026-06-14T22:00:00-05:00', utc: '2026-06-15T03:00:00Z', wrong: '2026-06-14T22:00:00+05:00' },
  ];
  for (const c of CASES) {
    it(`${c.tz}: ${c.local} and ${c.utc} are one tick; ${c.wrong} is none`, async () => {
      const name = `job-${c.tz.replace(/[^A-Za-z]/g, '').toLowerCase()}`;
      expect((await admin('PUT', `/api/v1/workflows/acme/${name}`, { cron: c.cron, timezone: c.tz })).status).toBe(201);
      const first = await report(name, { tick: c.local });
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      expect(first.body.tick).toBe(new Date(c.utc).toISOString());
      const again = await report(name, { tick: c.utc, status: 'failed' });
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ error: 'tick_taken', run: { id: first.body.id } });
      const wrong = await report(name, { tick: c.wrong });
      expect(wrong.status).toBe(400);
      expect(wrong.body.message).toContain('is not a fire time');
    });
  }

  it('a tick written without an offset is refused, naming the field: local time alone names no instant', async () => {
    expect((await admin('PUT', '/api/v1/workflows/acme/no-offset', { cron: '0 9 * * *', timezone: 'Asia/Kathmandu' })).status).toBe(201);
    const res = await report('no-offset', { tick: '2026-06-15T09:00:00' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/tick/);
  });

  it('a report without a tick, started at 09:10 Kathmandu, is the 09:00 tick (its grace is half an hour)', async () => {
    expect((await admin('PUT', '/api/v1/workflows/acme/no-tick', { cron: '0 9 * * *', timezone: 'Asia/Kathmandu' })).status).toBe(201);
    const res = await report('no-tick', {});
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ tick: '2026-06-15T03:15:00.000Z', trigger: 'schedule' });
  });
});

describe('a zone that is no zone', () => {
  for (const tz of ['Mars/Base', 'utc+2', '', '+05:45', 'Etc/GMT+14']) {
    it(`${JSON.stringify(tz)} is refused by the workflows API, naming the field and the value`, async () => {
      const res = await admin('PUT', '/api/v1/workflows/acme/bad-zone', { cron: '0 * * * *', timezone: tz });
      expect(res.status).toBe(400);
      expect(res.body.message).toContain('timezone');
      expect(res.body.message).toContain(`(got ${JSON.stringify(tz)})`);
      expect(await t.db.selectFrom('workflows').select('id').where('name', '=', 'bad-zone').execute()).toEqual([]);
    });
  }
});
