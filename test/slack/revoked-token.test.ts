import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { counterValue, metrics } from '../../src/metrics.js';
import { renderMetrics } from '../../src/http/metrics-route.js';
import { createOutboxSender, type OutageNotice } from '../../src/notify/sender.js';
import { slackTransport } from '../../src/slack/transport/slack-transport.js';
import { platformOutageNotice } from '../../src/slack/transport/outage-notice.js';
import type { StoredMessage } from '../../src/replay/recording-slack-api.js';
import type { TestDatabase } from '../helpers/db.js';
import { makeWorkflow, T0 } from '../helpers/factories.js';
import { addEvent, insertAlert, outboxTestHooks, startOutboxRig, type OutboxRig } from '../helpers/slack-outbox.js';

/**
 * A bot token Slack refuses (`token_revoked`, `invalid_auth`…) is a state of
 * the workspace, not of a message: every alert raised meanwhile waits, in
 * order, none dead, no row claimed over and over; the bot says so once; one
 * `auth.test` per back-off asks whether the token works again, and when it
 * does (re-enabled, or a restart with a new one) every message goes out once.
 * Slack is the stand-in at the HTTP boundary, refusing every call while revoked.
 */

let t: TestDatabase;
let rig: OutboxRig | undefined;

outboxTestHooks({
  database: (db) => (t = db),
  closeRig: async () => {
    await rig?.close();
    rig = undefined;
  },
  tenants: [
    { id: 'acme', name: 'Acme', channel: 'CACME' },
    { id: 'beta', name: 'Beta', channel: 'CBETA' },
  ],
});

const key = (m: StoredMessage) => m.metadata?.event_payload.key as string | undefined;
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const revoke = (r: OutboxRig, error = 'token_revoked') => r.slack.failNext({ kind: 'platform_error', error }, { times: Infinity });

/** Sender and refresher ticked until neither finds work, the clock left where it is. */
async function settle(r: OutboxRig): Promise<void> {
  for (let i = 0; i < 200; i++) if (!(await r.sender.tick()) && !(await r.refresher.tick())) return;
  throw new Error('the outbox did not settle');
}

const rows = () => t.db.selectFrom('notifications').selectAll().orderBy('id').execute();
const outages = () => t.db.selectFrom('destinationOutages').selectAll().execute();
const metricsText = () => renderMetrics({ db: t.db, clock: rig!.clock });

/** Two alerts in two channels: acme's opens and escalates, beta's opens. Their rows in the order written. */
async function raiseAlerts(r: OutboxRig, from: number) {
  const acme = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
  const beta = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'beta' })).id);
  await addEvent(t.db, acme.id, 'opened', { now: at(from) });
  await settle(r);
  await addEvent(t.db, beta.id, 'opened', { now: at(from + 1) });
  await addEvent(t.db, acme.id, 'escalated', { now: at(from + 2), changes: { severity: 'critical', escalatedAt: at(from + 2) } });
  await settle(r);
  return { acme, beta };
}

/** Every row sent, each key in Slack once, each thread in event order. */
async function expectEverythingOnce(r: OutboxRig, alerts: { acme: { id: number }; beta: { id: number } }) {
  const all = await rows();
  expect(all.map((n) => n.status)).toEqual(all.map(() => 'sent'));
  const keys = r.slack.messages().map(key);
  expect(new Set(keys).size).toBe(keys.length);
  const acmeRows = all.filter((n) => n.alertId === alerts.acme.id);
  const [root] = r.slack.roots('CACME');
  expect(key(root!)).toBe(acmeRows[0]!.idempotencyKey);
  expect(r.slack.replies('CACME', root!.ts).map(key)).toEqual([acmeRows[1]!.idempotencyKey]);
  expect(r.slack.roots('CBETA').map(key)).toEqual(all.filter((n) => n.alertId === alerts.beta.id).map((n) => n.idempotencyKey));
  expect(await outages()).toEqual([]);
}

describe('a bot token Slack refuses', () => {
  it('holds every Slack row, says so once, probes with auth.test at a back-off, and sends everything once, in order, when the token works again', async () => {
    let platform: ((n: OutageNotice) => Promise<void>) | undefined;
    rig = await startOutboxRig(t.db, { sender: { onOutage: (n) => platform!(n) } });
    platform = platformOutageNotice(rig.api, 'CPLAT');
    const noticesBefore = await counterValue(metrics.deliveries, { kind: 'slack', result: 'outage_notice' });
    revoke(rig);
    const alerts = await raiseAlerts(rig, 0);

    // The first post met the refusal; nothing is dead, nothing more was tried, nothing is leased.
    expect(rig.slack.callsTo('chat.postMessage').map((c) => c.outcome)).toEqual(['token_revoked']);
    const held = await rows();
    expect(held.map((n) => [n.status, n.leaseOwner])).toEqual(held.map(() => ['pending', null]));
    expect(held[0]).toMatchObject({ attempts: 1, lastError: 'token_revoked' });
    expect(await outages()).toMatchObject([{ destination: 'slack:*', cause: 'credentials', lastError: 'token_revoked', noticedAt: at(0) }]);
    // Told once, at once; not in the platform channel (the same dead token).
    expect(await counterValue(metrics.deliveries, { kind: 'slack', result: 'outage_notice' })).toBe(noticesBefore + 1);
    expect(rig.slack.messages('CPLAT')).toEqual([]);
    const text = await metricsText();
    expect(text).toContain('scheduler_destination_credentials_refused{kind="slack"} 1');
    expect(text).toContain('scheduler_outbox_held{kind="slack"} 3');

    // Minutes of revocation: one auth.test per back-off (15 s, doubling, at most 5 min), no post, no claim.
    for (let s = 1; s <= 20 * 60; s += 15) {
      rig.clock.set(at(s));
      await settle(rig);
    }
    expect(rig.slack.callsTo('chat.postMessage')).toHaveLength(1);
    const probes = rig.slack.callsTo('auth.test').map((c) => (c.at.getTime() - T0.getTime()) / 1000);
    expect(probes.length).toBeGreaterThanOrEqual(5);
    expect(probes.length).toBeLessThanOrEqual(9);
    for (let i = 1; i < probes.length; i++) expect(probes[i]! - probes[i - 1]!).toBeLessThanOrEqual(5 * 60 + 15);
    expect((await rows()).map((n) => n.status)).toEqual(held.map(() => 'pending'));
    expect(await counterValue(metrics.deliveries, { kind: 'slack', result: 'outage_notice' })).toBe(noticesBefore + 1);

    // The token is re-enabled: the next probe finds it, and everything goes out once, in order.
    rig.slack.clearFaults();
    await rig.drain({ stepMs: 5_000 });
    await expectEverythingOnce(rig, alerts);
    expect(rig.slack.callsTo('chat.postMessage').filter((c) => c.outcome === 'token_revoked')).toHaveLength(1);
    // The recovery reaches the platform channel: the token works by then.
    expect(rig.slack.messages('CPLAT').map((m) => m.text)).toEqual([expect.stringMatching(/^slack:\* accepts the bot's credentials again after \d+m of refusing/)]);
    expect(await metricsText()).not.toContain('scheduler_outbox_held{kind="slack"}');
  });

  it('a replica restarted with a new token probes at once, whatever the back-off, and sends what was held', async () => {
    rig = await startOutboxRig(t.db);
    revoke(rig, 'invalid_auth');
    const alerts = await raiseAlerts(rig, 0);
    rig.clock.set(at(16));
    await settle(rig); // the 15 s probe fails: the next is 30 s away
    expect(rig.slack.callsTo('auth.test')).toHaveLength(1);
    rig.slack.clearFaults();
    rig.clock.set(at(20));
    await settle(rig);
    expect(rig.slack.callsTo('auth.test')).toHaveLength(1);
    // The restart: a sender of its own, its first look probes.
    const deps = { db: t.db, clock: rig.clock, logger: silentLogger, replicaId: 'restarted', launchers: () => undefined };
    const restarted = createOutboxSender(deps, [slackTransport(deps, rig.api)]);
    await restarted.tick();
    expect(rig.slack.callsTo('auth.test').map((c) => c.outcome)).toEqual(['invalid_auth', 'ok']);
    await rig.drain();
    await expectEverythingOnce(rig, alerts);
  });

  it('a post whose answer was lost, then looked up over the refused token, waits sending and is found, not posted again', async () => {
    rig = await startOutboxRig(t.db, { timeoutMs: 300 });
    const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
    rig.slack.failNext({ kind: 'lost' }, { method: 'chat.postMessage' });
    await addEvent(t.db, alert.id, 'opened', { now: at(0) });
    await settle(rig);
    revoke(rig);
    rig.clock.set(at(5));
    await settle(rig);
    expect(rig.slack.callsTo('conversations.history').map((c) => c.outcome)).toEqual(['token_revoked']);
    expect(await rows()).toMatchObject([{ status: 'sending', leaseOwner: null, lastError: 'lookup failed: token_revoked' }]);
    rig.slack.clearFaults();
    await rig.drain({ stepMs: 5_000 });
    expect(await rows()).toMatchObject([{ status: 'sent' }]);
    expect(rig.slack.callsTo('chat.postMessage')).toHaveLength(1);
    expect(rig.slack.roots('CACME')).toHaveLength(1);
  });

  it('other Slack errors keep their classification: a permanent one kills its row alone, nothing is held', async () => {
    rig = await startOutboxRig(t.db);
    rig.slack.failNext({ kind: 'platform_error', error: 'channel_not_found' }, { method: 'chat.postMessage', channel: 'CACME' });
    const alerts = await raiseAlerts(rig, 0);
    await rig.drain();
    expect((await rows()).map((n) => [n.alertId === alerts.acme.id ? 'acme' : 'beta', n.status])).toEqual([
      ['acme', 'dead'],
      ['beta', 'sent'],
      ['acme', 'sent'],
    ]);
    expect(await outages()).toEqual([]);
  });
});
