import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';

const ADMIN = 'admin-token-0123456789abcdef';
const SCRAPE = 'metrics-token-0123456789abcdef';

let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
let tenantToken: string;

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
  app = await startTestApp(t, { API_TOKEN: ADMIN, METRICS_TOKEN: SCRAPE }, { clock: new ManualClock('2026-03-10T02:05:20Z') });
  const minted = await apiClient(app.url, ADMIN)('POST', '/api/v1/tenants/acme/token');
  expect(minted.status).toBe(201);
  tenantToken = minted.body.token;
});
afterAll(async () => {
  await app.stop();
  await t.drop();
});

const scrape = (token?: string) => fetch(`${app.url}/metrics`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });

describe('GET /metrics with METRICS_TOKEN set', () => {
  it('answers a scrape carrying the metrics token or the admin token', async () => {
    for (const token of [SCRAPE, ADMIN]) {
      const r = await scrape(token);
      expect(r.status).toBe(200);
      expect(await r.text()).toMatch(/^scheduler_database_up 1$/m);
    }
  });

  it('refuses an anonymous scrape, a wrong token and a tenant token with 401, showing no figure', async () => {
    for (const token of [undefined, 'metrics-token-0123456789abcdeX', tenantToken]) {
      const r = await scrape(token);
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      const body = await r.text();
      expect(body).not.toContain('scheduler_');
      expect(JSON.parse(body)).toMatchObject({ error: 'unauthorized' });
    }
  });

  it('keeps the health checks open (probes carry no token)', async () => {
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
  });
});
