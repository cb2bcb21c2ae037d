import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { hashToken } from '../../src/secrets.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';

/**
 * A tenant reporting runs as fast as it can (the API or pings) spends its
 * own allowance, TENANT_REPORTS_PER_MINUTE, not the database or the other
 * tenants' share: past it, 429 with Retry-After naming the limit.
 */
const ADMIN = 'admin-token-rate-0123456789abcdef';
const ACME_TOKEN = 'sbt_acme-rate-token-0123456789abcdef';
const GLOBEX_TOKEN = 'sbt_globex-rate-token-0123456789abcd';

let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
const clock = new ManualClock(new Date(T0.getTime() + 30_000));
let acmeKey: string;
let globexKey: string;
const acme = () => apiClient(app.url, ACME_TOKEN);
const globex = () => apiClient(app.url, GLOBEX_TOKEN);
const admin = () => apiClient(app.url, ADMIN);
const report = (tenant: string) => ({ tenant, workflow: 'load', status: 'succeeded' });
const ping = (key: string) => fetch(`${app.url}/ping/${key}`);

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', apiTokenHash: hashToken(ACME_TOKEN) });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX', apiTokenHash: hashToken(GLOBEX_TOKEN) });
  acmeKey = (await makeWorkflow(t.db, { tenantId: 'acme', name: 'load' })).pingKey!;
  globexKey = (await makeWorkflow(t.db, { tenantId: 'globex', name: 'load' })).pingKey!;
  app = await startTestApp(t, { API_TOKEN: ADMIN, TENANT_REPORTS_PER_MINUTE: '3' }, { clock });
});
afterAll(async () => {
  await app?.stop();
  await t.drop();
});

describe('TENANT_REPORTS_PER_MINUTE', () => {
  it('answers a tenant\'s reports past its allowance 429 naming the limit, over the API and by ping alike, and stores none of them', async () => {
    expect((await acme()('POST', '/api/v1/runs', report('acme'))).status).toBeLessThan(300);
    expect((await ping(acmeKey)).status).toBe(200);
    expect((await acme()('POST', '/api/v1/runs', report('acme'))).status).toBeLessThan(300);
    const before = await t.db.selectFrom('runs').select('id').execute();

    const refused = await acme()('POST', '/api/v1/runs', report('acme'));
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: 'rate_limited', limit: 3 });
    expect(refused.body.message).toContain('TENANT_REPORTS_PER_MINUTE=3');
    expect((await acme()('POST', '/api/v1/runs/1', { status: 'failed' })).status).toBe(429);
    const pinged = await ping(acmeKey);
    expect(pinged.status).toBe(429);
    expect(Number(pinged.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await pinged.text()).toContain('TENANT_REPORTS_PER_MINUTE=3');
    expect(await t.db.selectFrom('runs').select('id').execute()).toEqual(before);
  });

  it('leaves other tenants and the admin token their own allowance', async () => {
    expect((await globex()('POST', '/api/v1/runs', report('globex'))).status).toBeLessThan(300);
    expect((await ping(globexKey)).status).toBe(200);
    expect((await admin()('POST', '/api/v1/runs', report('acme'))).status).toBeLessThan(300);
  });

  it('gives the allowance back as the minute passes', async () => {
    clock.advance(20_000);
    expect((await acme()('POST', '/api/v1/runs', report('acme'))).status).toBeLessThan(300);
    expect((await ping(acmeKey)).status).toBe(429);
  });
});
