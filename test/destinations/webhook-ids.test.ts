import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { webhookDestinationId } from '../../src/config/destination-schema.js';
import { renderMetrics } from '../../src/http/metrics-route.js';
import { loadDestinationIdKey } from '../../src/ledger/destination-id-key.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { insertAlert } from '../helpers/slack-outbox.js';
import { recordEvent, startDestinationRig, endDestinationTest, type DestinationRig } from './rig.js';

/**
 * A webhook's URL is often its secret (a Slack incoming webhook, a token in
 * the query): nothing stored names it, delivery still finds it in the
 * configuration, and a row whose webhook is gone is never sent elsewhere.
 */
let t: TestDatabase;
let rig: DestinationRig | undefined;
const at = (m: number) => new Date(T0.getTime() + m * 60_000);
const SECRET_PATH = '/services/T0ACME/B0HOOK/xoxsecretpathtoken';
const SECRET_QUERY = 'token=querysecret123';

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.drop());
afterEach(async () => {
  await endDestinationTest(t.db, rig);
  rig = undefined;
});

async function setup() {
  rig = await startDestinationRig(t.db);
  const url = `${rig.webhook.url}${SECRET_PATH}?${SECRET_QUERY}`;
  const destinations = rig.destinations({ webhook: { url } }).filter((d) => d.kind === 'webhook');
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: null, destinations: JSON.stringify(destinations) });
  const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *' });
  const alert = await insertAlert(t.db, wf.id, { severity: 'critical', openedAt: at(0), escalateAt: null, lastError: 'boom' });
  return { rig, url, alert };
}

/** Every text column of the outbox, its events and its outages, as one string to search. */
async function storedText(): Promise<string> {
  const rows = await Promise.all([
    t.db.selectFrom('notifications').select(['destination', 'idempotencyKey', 'lastError', 'result']).execute(),
    t.db.selectFrom('alertEvents').select(['data']).execute(),
    t.db.selectFrom('destinationOutages').selectAll().execute(),
    t.db.selectFrom('paceSlots').selectAll().execute(),
  ]);
  return JSON.stringify(rows);
}

describe('webhook destination ids', () => {
  it('name the host and a keyed digest: stored rows, events and /metrics never hold the path or query, and delivery reaches the URL', async () => {
    const { rig, url, alert } = await setup();
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'critical' } });
    await recordEvent(t.db, rig.config, alert.id, 'resolved', { now: at(30), changes: { status: 'resolved', resolvedAt: at(30) }, data: { runId: 9 } });
    await rig.drain();

    expect(rig.webhook.requests.map((r) => r.path)).toEqual([`${SECRET_PATH}?${SECRET_QUERY}`, `${SECRET_PATH}?${SECRET_QUERY}`]);
    const rows = await t.db.selectFrom('notifications').select(['destination', 'status']).execute();
    const host = new URL(url).host;
    expect(rows).toEqual([
      { destination: expect.stringMatching(new RegExp(`^webhook:${host.replace(/\./g, '\\.')}/[0-9a-f]{16}$`)), status: 'sent' },
      { destination: rows[0]!.destination, status: 'sent' },
    ]);
    expect(rows[0]!.destination).toBe(webhookDestinationId(url, await loadDestinationIdKey(t.db)));
    const stored = await storedText();
    const metrics = await renderMetrics({ db: t.db, clock: new ManualClock(at(30)) });
    for (const secret of ['xoxsecretpathtoken', 'querysecret123', 'B0HOOK']) {
      expect(stored).not.toContain(secret);
      expect(metrics).not.toContain(secret);
    }
  });

  it('the digest is keyed: the same URL under another key, or a guessed URL, gives another id', () => {
    const url = 'https://hooks.example.com/t/1234';
    expect(webhookDestinationId(url, 'key-a')).toBe(webhookDestinationId(url, 'key-a'));
    expect(webhookDestinationId(url, 'key-a')).not.toBe(webhookDestinationId(url, 'key-b'));
    expect(webhookDestinationId('https://hooks.example.com/t/1235', 'key-a')).not.toBe(webhookDestinationId(url, 'key-a'));
    expect(() => webhookDestinationId(url, undefined)).toThrow(/destination id key/);
  });

  it('a webhook removed from the configuration: its pending row goes dead saying so, and nothing is sent anywhere', async () => {
    const { rig, alert } = await setup();
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'critical' } });
    // Same host, another path: still not the destination the row was written for.
    const other = rig.destinations({ webhook: { url: `${rig.webhook.url}/hooks/other` } }).filter((d) => d.kind === 'webhook');
    await t.db.updateTable('tenants').set({ destinations: JSON.stringify(other) }).where('id', '=', 'acme').execute();
    await rig.drain();

    expect(rig.webhook.requests).toEqual([]);
    const [row] = await t.db.selectFrom('notifications').select(['destination', 'status', 'lastError']).execute();
    expect(row).toEqual({ destination: row!.destination, status: 'dead', lastError: `destination ${row!.destination} is no longer configured for tenant acme` });
    expect(await storedText()).not.toContain('xoxsecretpathtoken');
    // The operator removed it on purpose: no refusal is counted or told.
    expect(await t.db.selectFrom('destinationRefusals').selectAll().execute()).toEqual([]);
  });

  it('a row written as webhook:<URL> by a replica of the previous version (rolling upgrade) is still delivered to that URL', async () => {
    const { rig, url, alert } = await setup();
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'critical' } });
    const legacy = `webhook:${url}`;
    const [row] = await t.db.selectFrom('notifications').select(['id', 'eventId']).execute();
    await t.db
      .updateTable('notifications')
      .set({ destination: legacy, idempotencyKey: `alert:${alert.id}:event:${row!.eventId}:${legacy}` })
      .where('id', '=', row!.id)
      .execute();
    await rig.drain();

    expect(rig.webhook.requests.map((r) => r.path)).toEqual([`${SECRET_PATH}?${SECRET_QUERY}`]);
    expect(await t.db.selectFrom('notifications').select('status').execute()).toEqual([{ status: 'sent' }]);
  });
});
