import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { destinationId } from '../../src/config/workflows-file.js';
import { webhookDestinationId } from '../../src/config/destination-schema.js';
import { loadDestinationIdKey } from '../../src/ledger/destination-id-key.js';
import { verifyLaunchSignature } from '../../src/launch/signature.js';
import { createOutboxSender } from '../../src/notify/sender.js';
import { destinationTransports } from '../../src/notify/transports/index.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeWorkflow, T0 } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { insertAlert } from '../helpers/slack-outbox.js';
import { HttpReceiver } from '../destinations/http-receiver.js';
import { recordEvent } from '../destinations/rig.js';

/** PUT /api/v1/tenants/{id} with destinations: the file's validation and error shape, secrets never shown back. */

const ADMIN = 'admin-token-0123456789abcdef';
const WEBHOOK_SECRET = 'whsec_api_tenant_0123456789';
const ROUTING_KEY = 'APIR0UT1NGKEY0123456789ABCDEFGH';
// The replica answering the PUT resolves references in its own environment: this process's.
process.env.INITECH_PD_KEY = ROUTING_KEY;

let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
let admin: ReturnType<typeof apiClient>;
let receiver: HttpReceiver;
const clock = new ManualClock(T0);

beforeAll(async () => {
  t = await createTestDatabase();
  receiver = await HttpReceiver.start();
  app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock });
  admin = apiClient(app.url, ADMIN);
});
afterAll(async () => {
  await app.stop();
  await receiver.close();
  await t.drop();
  delete process.env.INITECH_PD_KEY;
});

const storedDestinations = async (id: string) => (await t.db.selectFrom('tenants').select('destinations').where('id', '=', id).executeTakeFirstOrThrow()).destinations;

describe('PUT /api/v1/tenants/{id} with destinations', () => {
  it('stores them (references resolved) and shows them with their outbox ids, never a secret', async () => {
    const hook = `${receiver.url}/hooks/initech`;
    const put = await admin('PUT', '/api/v1/tenants/initech', {
      name: 'Initech',
      channel: 'CINITECH',
      destinations: [
        { kind: 'email', to: ['oncall@initech.example.com'], minSeverity: 'critical' },
        { kind: 'webhook', url: hook, secret: WEBHOOK_SECRET, headers: { Authorization: 'Bearer receiver-token' } },
        { kind: 'pagerduty', routingKeyEnv: 'INITECH_PD_KEY' },
      ],
    });
    expect(put.status).toBe(201);
    const pagerDutyId = destinationId({ kind: 'pagerduty', routingKey: ROUTING_KEY }, undefined);
    expect(put.body.destinations).toEqual([
      { id: 'email:oncall@initech.example.com', kind: 'email', to: ['oncall@initech.example.com'], minSeverity: 'critical' },
      { id: webhookDestinationId(hook, await loadDestinationIdKey(t.db)), kind: 'webhook', url: hook, headers: ['Authorization'], hasSecret: true },
      { id: pagerDutyId, kind: 'pagerduty', hasRoutingKey: true },
    ]);
    for (const secret of [WEBHOOK_SECRET, ROUTING_KEY, 'receiver-token']) expect(put.text).not.toContain(secret);

    expect(await storedDestinations('initech')).toEqual([
      { kind: 'email', to: ['oncall@initech.example.com'], minSeverity: 'critical' },
      { kind: 'webhook', url: hook, secret: WEBHOOK_SECRET, headers: { Authorization: 'Bearer receiver-token' } },
      { kind: 'pagerduty', routingKey: ROUTING_KEY },
    ]);
    const listed = await admin('GET', '/api/v1/tenants');
    expect(listed.body.tenants.find((x: { id: string }) => x.id === 'initech').destinations).toEqual(put.body.destinations);
    expect(listed.text).not.toContain(WEBHOOK_SECRET);
  });

  it('the destinations it stored are the ones alerts go to: the webhook gets the event signed with its secret', async () => {
    const wf = await makeWorkflow(t.db, { tenantId: 'initech', name: 'nightly', cron: '0 2 * * *' });
    const alert = await insertAlert(t.db, wf.id, { severity: 'warning', openedAt: T0, escalateAt: null, lastError: 'boom' });
    await recordEvent(t.db, app.deps.config, alert.id, 'opened', { now: T0, data: { severity: 'warning' } });
    const rows = await t.db.selectFrom('notifications').select(['destination', 'status']).where('alertId', '=', alert.id).orderBy('destination').execute();
    // A warning: the critical-only email and PagerDuty (critical by default) are not told; the tenant's channel and the webhook are.
    expect(rows.map((r) => r.destination)).toEqual([`slack:CINITECH`, webhookDestinationId(`${receiver.url}/hooks/initech`, await loadDestinationIdKey(t.db))]);

    const sender = createOutboxSender(app.deps, destinationTransports(app.deps, { timeoutMs: 2000 }));
    while (await sender.tick());
    const [request] = receiver.requests;
    expect(request?.path).toBe('/hooks/initech');
    expect(request?.headers.authorization).toBe('Bearer receiver-token');
    const signed = { body: request!.body, timestamp: request!.headers['x-scheduler-timestamp'] as string, signature: request!.headers['x-scheduler-signature'] as string };
    expect(verifyLaunchSignature(WEBHOOK_SECRET, signed, clock.now())).toEqual({ ok: true });
  });

  it('refuses a bad list with 400 naming each field path and value, secrets hidden, and changes nothing', async () => {
    const before = await storedDestinations('initech');
    const bad = await admin('PUT', '/api/v1/tenants/initech', {
      name: 'Initech',
      channel: 'CINITECH',
      destinations: [
        { kind: 'webhook', url: 'ftp://files.initech.example.com', secret: 'short-hunter2' },
        { kind: 'pagerduty', routingKey: 'not-a-key-but-secret!' },
        { kind: 'sms', to: '+15550100' },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_request');
    expect(bad.body.issues).toEqual([
      'body: destinations[0].url: an http(s) URL (got "ftp://files.initech.example.com")',
      'body: destinations[0].secret: secret must be at least 16 characters (got "(hidden)")',
      'body: destinations[1].routingKey: a PagerDuty Events API v2 integration key (20 to 64 letters and digits) (got "(hidden)")',
      'body: destinations[2].kind: kind must be one of "slack", "email", "webhook", "pagerduty" (got "sms")',
    ]);
    expect(bad.body.message).toBe(bad.body.issues.join('; '));
    expect(bad.text).not.toMatch(/short-hunter2|not-a-key-but-secret/);
    expect(await storedDestinations('initech')).toEqual(before);
  });

  it('refuses a webhook header the bot sets itself (any case), naming the header, never its value', async () => {
    const bad = await admin('PUT', '/api/v1/tenants/initech', {
      name: 'Initech',
      channel: 'CINITECH',
      destinations: [{ kind: 'webhook', url: 'https://hooks.initech.example.com', secret: WEBHOOK_SECRET, headers: { 'x-scheduler-signature': 'v1=hunter2-forged' } }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.issues).toEqual(['body: destinations[0].headers.x-scheduler-signature: header "x-scheduler-signature" is set by the bot itself (every X-Scheduler-* header is); remove it (got "(hidden)")']);
    expect(bad.text).not.toContain('hunter2');
  });

  it('refuses a reference to an unset variable, naming the path and the variable, and changes nothing', async () => {
    const before = await storedDestinations('initech');
    const bad = await admin('PUT', '/api/v1/tenants/initech', {
      name: 'Initech',
      destinations: [{ kind: 'webhook', url: 'https://hooks.initech.example.com', secretEnv: 'INITECH_UNSET_SECRET' }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      error: 'invalid_request',
      message: 'body: destinations[0].secretEnv: names an environment variable that is not set (got "INITECH_UNSET_SECRET")',
      issues: ['body: destinations[0].secretEnv: names an environment variable that is not set (got "INITECH_UNSET_SECRET")'],
    });
    const both = await admin('PUT', '/api/v1/tenants/initech', {
      name: 'Initech',
      destinations: [{ kind: 'pagerduty', routingKey: ROUTING_KEY, routingKeyEnv: 'INITECH_PD_KEY' }],
    });
    expect(both.status).toBe(400);
    expect(both.body.issues).toEqual(['body: destinations[0].routingKeyEnv: give "routingKey" or "routingKeyEnv", not both (got "INITECH_PD_KEY")']);
    expect(await storedDestinations('initech')).toEqual(before);
  });

  it('replaces: a PUT without destinations leaves the tenant with none', async () => {
    const put = await admin('PUT', '/api/v1/tenants/initech', { name: 'Initech Corp', channel: 'CINITECH' });
    expect(put.status).toBe(200);
    expect(put.body.destinations).toEqual([]);
    expect(await storedDestinations('initech')).toEqual([]);
  });

  it('a tenant token cannot set destinations', async () => {
    const minted = await admin('POST', '/api/v1/tenants/initech/token');
    const tenant = apiClient(app.url, minted.body.token);
    const put = await tenant('PUT', '/api/v1/tenants/initech', { name: 'Initech', destinations: [{ kind: 'email', to: ['x@example.com'] }] });
    expect(put.status).toBe(403);
    expect(await storedDestinations('initech')).toEqual([]);
  });
});

describe("a password in a webhook destination's URL", () => {
  it('is a secret: the PUT answer, the admin\'s and the tenant\'s GET /tenants show it as [redacted]', async () => {
    const password = 'hook-basic-password-0123456789';
    const put = await admin('PUT', '/api/v1/tenants/vandelay', {
      name: 'Vandelay',
      destinations: [{ kind: 'webhook', url: `https://alerts:${password}@hooks.vandelay.example.com/in?team=ops`, secret: WEBHOOK_SECRET }],
    });
    expect(put.status).toBe(201);
    const minted = await admin('POST', '/api/v1/tenants/vandelay/token');
    const tenant = apiClient(app.url, minted.body.token);
    const shown = [put.body, ...(await admin('GET', '/api/v1/tenants')).body.tenants, ...(await tenant('GET', '/api/v1/tenants')).body.tenants].filter((v) => v.id === 'vandelay');
    expect(shown).toHaveLength(3);
    for (const view of shown) {
      expect(JSON.stringify(view)).not.toContain(password);
      expect(view.destinations[0].url).toBe('https://alerts:[redacted]@hooks.vandelay.example.com/in?team=ops');
    }
  });
});

describe('PUT /api/v1/tenants/{id}: one tenant per channel', () => {
  it("another enabled tenant's channel is channel_taken; so is the platform channel", async () => {
    expect((await admin('PUT', '/api/v1/tenants/umbrella', { name: 'Umbrella', channel: 'CUMBRELLA' })).status).toBe(201);
    const taken = await admin('PUT', '/api/v1/tenants/hooli', { name: 'Hooli', channel: 'CUMBRELLA' });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ error: 'channel_taken', message: expect.stringContaining('body.channel: CUMBRELLA already belongs to tenant "umbrella"') });
    const withPlatform = await startTestApp(t, { API_TOKEN: ADMIN, PLATFORM_CHANNEL: 'CPLATFORM' }, { clock });
    const platform = await apiClient(withPlatform.url, ADMIN)('PUT', '/api/v1/tenants/hooli', { name: 'Hooli', channel: 'CPLATFORM' }).finally(() => withPlatform.stop());
    expect(platform.status).toBe(409);
    expect(platform.body).toMatchObject({ error: 'channel_taken', message: expect.stringContaining('PLATFORM_CHANNEL') });
    expect(await t.db.selectFrom('tenants').select('id').where('id', '=', 'hooli').executeTakeFirst()).toBeUndefined();
  });
});
