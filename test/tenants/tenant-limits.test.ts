import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/secrets.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';

/**
 * Per-tenant bounds: a tenant token cannot create workflows without end
 * (each one is rows, ticks and evaluations every other tenant's loops share).
 */
const ADMIN = 'admin-token-limits-0123456789abcdef';
const ACME_TOKEN = 'sbt_acme-limits-token-0123456789abcde';
const GLOBEX_TOKEN = 'sbt_globex-limits-token-0123456789abc';

let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
const acme = () => apiClient(app.url, ACME_TOKEN);
const globex = () => apiClient(app.url, GLOBEX_TOKEN);
const admin = () => apiClient(app.url, ADMIN);
const observed = { cron: '*/5 * * * *' };

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', apiTokenHash: hashToken(ACME_TOKEN) });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX', apiTokenHash: hashToken(GLOBEX_TOKEN) });
  // Two of acme's three come from the operator's file: they count too.
  await makeWorkflow(t.db, { tenantId: 'acme', name: 'from-file-1', source: 'file' });
  await makeWorkflow(t.db, { tenantId: 'acme', name: 'from-file-2', source: 'file' });
  app = await startTestApp(t, { API_TOKEN: ADMIN, MAX_WORKFLOWS_PER_TENANT: '3', MAX_MAINTENANCE_WINDOWS_PER_TENANT: '2' });
});
afterAll(async () => {
  await app?.stop();
  await t.drop();
});

describe('MAX_WORKFLOWS_PER_TENANT', () => {
  it('refuses a tenant token\'s workflow past the limit with 403 naming it, and creates nothing', async () => {
    expect((await acme()('PUT', '/api/v1/workflows/acme/third', observed)).status).toBe(201);
    const refused = await acme()('PUT', '/api/v1/workflows/acme/fourth', observed);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'workflow_limit', limit: 3 });
    expect(refused.body.message).toContain('MAX_WORKFLOWS_PER_TENANT');
    expect(refused.body.message).toContain('3');
    expect(await t.db.selectFrom('workflows').select('name').where('name', '=', 'fourth').execute()).toEqual([]);
  });

  it('still lets the tenant replace a workflow it has, and counts no other tenant\'s', async () => {
    expect((await acme()('PUT', '/api/v1/workflows/acme/third', { cron: '*/10 * * * *' })).status).toBe(200);
    expect((await globex()('PUT', '/api/v1/workflows/globex/third', observed)).status).toBe(201);
  });

  it('frees a place when one is deleted (a deleted workflow keeps its history, not its place)', async () => {
    expect((await acme()('DELETE', '/api/v1/workflows/acme/third')).status).toBe(200);
    expect((await acme()('PUT', '/api/v1/workflows/acme/fourth', observed)).status).toBe(201);
    // Bringing the deleted one back would make four.
    expect((await acme()('PUT', '/api/v1/workflows/acme/third', observed)).status).toBe(403);
  });

  it('holds under creations sent at once: the count is taken in turns, so the limit is never passed', async () => {
    await makeTenant(t.db, { id: 'initech', name: 'Initech', channel: 'CINITECH', apiTokenHash: hashToken('sbt_initech-limits-token-0123456789ab') });
    const initech = apiClient(app.url, 'sbt_initech-limits-token-0123456789ab');
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => initech('PUT', `/api/v1/workflows/initech/burst-${i}`, observed)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 403, 403, 403, 403, 403]);
    const stored = await t.db.selectFrom('workflows').select('name').where('tenantId', '=', 'initech').where('enabled', '=', true).execute();
    expect(stored).toHaveLength(3);
  });

  it('does not bind the admin token (the operator is trusted with the host)', async () => {
    expect((await admin()('PUT', '/api/v1/workflows/acme/fifth', observed)).status).toBe(201);
  });
});

describe('MAX_MAINTENANCE_WINDOWS_PER_TENANT', () => {
  it("refuses a tenant token's window past the windows not yet ended with 403 naming the limit; other tenants and the admin are not counted", async () => {
    const window = { tenant: 'globex', duration: '1h', reason: 'upgrade' };
    expect((await globex()('POST', '/api/v1/maintenance', window)).status).toBe(201);
    expect((await globex()('POST', '/api/v1/maintenance', { ...window, workflow: 'third' })).status).toBe(201);
    const refused = await globex()('POST', '/api/v1/maintenance', window);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'maintenance_limit', limit: 2 });
    expect(refused.body.message).toContain('MAX_MAINTENANCE_WINDOWS_PER_TENANT=2');
    expect(await t.db.selectFrom('maintenanceWindows').select('id').where('tenantId', '=', 'globex').execute()).toHaveLength(2);
    expect((await acme()('POST', '/api/v1/maintenance', { ...window, tenant: 'acme' })).status).toBe(201);
    expect((await admin()('POST', '/api/v1/maintenance', window)).status).toBe(201);
  });
});
