import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/secrets.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { startHttpTarget } from '../helpers/http-target.js';
import { finishedRun } from '../runs/support.js';

/**
 * The address check runs when a socket connects. A kept-alive socket that an
 * operator's launcher (unchecked: the operator may reach its own network)
 * left open to the same host and port must not carry a tenant's request past
 * that check: Node's global agent keeps sockets alive and pools them by host
 * and port alone.
 */

const ADMIN = 'admin-token-sockets-0123456789abcdef';
const ACME_TOKEN = 'sbt_acme-sockets-token-0123456789abcd';
const ACME_LAUNCH = 'acme-sockets-launch-secret-0123456789';
let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
let target: Awaited<ReturnType<typeof startHttpTarget>>;

beforeAll(async () => {
  t = await createTestDatabase();
  target = await startHttpTarget();
  // acme may name "localhost", which resolves to loopback: refused at connect time.
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', apiTokenHash: hashToken(ACME_TOKEN), launcherHosts: JSON.stringify(['localhost']) });
  app = await startTestApp(t, { API_TOKEN: ADMIN, LAUNCHER_SECRET: 'sockets-launcher-secret-0123456789' });
});
afterAll(async () => {
  await app?.stop();
  await target?.stop();
  await t?.drop();
});

describe("a tenant's launch never rides the operator's open socket", () => {
  it("after the operator's launcher reached localhost, the tenant's launcher to the same host and port is still refused; the target hears only the operator", async () => {
    const port = new URL(target.url).port;
    const admin = apiClient(app.url, ADMIN);
    const acme = apiClient(app.url, ACME_TOKEN);
    expect((await admin('PUT', '/api/v1/workflows/acme/operator', { cron: '0 0 1 1 *', mode: 'observed', launcher: { kind: 'http', url: `http://localhost:${port}/operator` } })).status).toBe(201);
    expect((await acme('PUT', '/api/v1/workflows/acme/tenant', { cron: '0 0 1 1 *', mode: 'observed', launcher: { kind: 'http', url: `http://localhost:${port}/tenant`, secret: ACME_LAUNCH } })).status).toBe(201);

    const operator = await acme('POST', '/api/v1/workflows/acme/operator/run');
    expect(await finishedRun(t.db, operator.body.id)).toMatchObject({ status: 'succeeded' });
    const tenant = await acme('POST', '/api/v1/workflows/acme/tenant/run');
    const done = await finishedRun(t.db, tenant.body.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/^launch refused: localhost resolves to/);
    expect(target.received.map((r) => r.url)).toEqual(['/operator']);
  });
});
