import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { hashToken } from '../../src/secrets.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';

/**
 * GET /alerts/{id} shows where each notification stands per destination. A
 * tenant token saw every destination of the alert, the platform's included:
 * PLATFORM_DESTINATIONS (kept like a secret: its own *_FILE, hidden in config
 * errors) gave away the platform's on-call addresses, its receivers' hosts
 * and their error answers. A tenant sees its own destinations only.
 */

const ADMIN = 'admin-token-deliveries-0123456789';
const TOKEN = 'sbt_acme-deliveries-token-0123456789ab';
const PLATFORM = [
  { kind: 'email', to: ['platform-oncall@ops.example.com'], minSeverity: 'warning' },
  { kind: 'webhook', url: 'https://platform-hooks.example.com/T0/hook', secret: 'platform-webhook-secret-0123456789', minSeverity: 'warning' },
];

let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, {
    id: 'acme',
    name: 'Acme',
    channel: 'CACME',
    apiTokenHash: hashToken(TOKEN),
    destinations: JSON.stringify([{ kind: 'email', to: ['oncall@acme.example.com'] }]),
  });
  await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly', cron: '0 2 * * *' });
  app = await startTestApp(t, { API_TOKEN: ADMIN, PLATFORM_CHANNEL: 'CPLAT', PLATFORM_DESTINATIONS: JSON.stringify(PLATFORM) }, { clock: new ManualClock(T0) });
});
afterAll(async () => {
  await app?.stop();
  await t?.drop();
});

describe("an alert's deliveries", () => {
  it("a tenant token sees its own destinations' delivery states, never the platform's; the admin sees all", async () => {
    const acme = apiClient(app.url, TOKEN);
    expect((await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'nightly', status: 'failed', tick: T0.toISOString(), error: 'boom' })).status).toBe(201);
    await pollFinishedRuns(app.deps);
    const alert = await t.db.selectFrom('alerts').select('id').executeTakeFirstOrThrow();
    await t.db.updateTable('notifications').set({ lastError: 'HTTP 500: internal-router-7.corp.example.com refused' }).where('destination', 'like', 'webhook:%').execute();

    const all = (await apiClient(app.url, ADMIN)('GET', `/api/v1/alerts/${alert.id}`)).body.notifications.map((n: { destination: string }) => n.destination);
    expect(all).toEqual(expect.arrayContaining(['slack:CACME', 'slack:CPLAT', 'email:oncall@acme.example.com', 'email:platform-oncall@ops.example.com']));
    expect(all.some((d: string) => d.startsWith('webhook:platform-hooks.example.com'))).toBe(true);

    const asTenant = await acme('GET', `/api/v1/alerts/${alert.id}`);
    expect(asTenant.status).toBe(200);
    expect(asTenant.body.notifications.map((n: { destination: string }) => n.destination).sort()).toEqual(['email:oncall@acme.example.com', 'slack:CACME']);
    for (const hidden of ['platform-oncall', 'platform-hooks', 'internal-router', 'CPLAT']) expect(asTenant.text).not.toContain(hidden);
  });

  it("a PagerDuty incident of the platform's left open by a resolve: the tenant token reads a count, never the key's id or the incident's key", async () => {
    const alert = await t.db.selectFrom('alerts').select('id').executeTakeFirstOrThrow();
    const incidents = [
      { destination: 'pagerduty:aaaaaaaaaaaa', dedupKey: 'scheduler-bot:0123abcd4567:alert:1', configuredBy: 'platform' },
      { destination: 'pagerduty:bbbbbbbbbbbb', dedupKey: 'scheduler-bot:0123abcd4567:alert:1', configuredBy: 'tenant' },
    ];
    await t.db.insertInto('alertEvents').values({ alertId: alert.id, at: T0, kind: 'resolved', actor: null, data: JSON.stringify({ unresolvedIncidents: incidents }) }).execute();
    const asTenant = await apiClient(app.url, TOKEN)('GET', `/api/v1/alerts/${alert.id}`);
    const resolved = asTenant.body.events.find((e: { kind: string }) => e.kind === 'resolved');
    expect(resolved.data).toEqual({ unresolvedIncidents: [incidents[1]], platformIncidentsOpen: 1 });
    expect(asTenant.text).not.toContain('pagerduty:aaaaaaaaaaaa');
    const asAdmin = await apiClient(app.url, ADMIN)('GET', `/api/v1/alerts/${alert.id}`);
    expect(asAdmin.body.events.find((e: { kind: string }) => e.kind === 'resolved').data).toEqual({ unresolvedIncidents: incidents });
  });
});
