import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { destinationId } from '../../src/config/workflows-file.js';
import { dedupKeyFor, installationOf } from '../../src/domain/pagerduty-incident.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createKeyedEngine, reportRun, stepUntil } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { insertAlert } from '../helpers/slack-outbox.js';
import { endDestinationTest, recordEvent, startDestinationRig, type DestinationRig } from './rig.js';

// PagerDuty's side is played at its HTTP boundary: the Events API v2 endpoint, intercepted by nock.
const EVENTS_HOST = 'https://events.pagerduty.test';
const KEY_A = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const KEY_B = 'BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';
const pager = (routingKey: string, extra: Record<string, unknown> = {}) => ({ kind: 'pagerduty', routingKey, ...extra });

let t: TestDatabase;
let rig: DestinationRig | undefined;
let events: Record<string, any>[] = [];
const at = (m: number) => new Date(T0.getTime() + m * 60_000);

beforeAll(async () => {
  t = await createTestDatabase();
  nock.disableNetConnect();
  nock.enableNetConnect((host) => host.startsWith('127.0.0.1') || host.startsWith('localhost'));
});
afterAll(async () => {
  nock.enableNetConnect();
  await t.drop();
});
afterEach(async () => {
  nock.cleanAll();
  events = [];
  await endDestinationTest(t.db, rig);
  rig = undefined;
});

function eventsApi() {
  nock(EVENTS_HOST)
    .persist()
    .post('/v2/enqueue')
    .reply(202, (_uri, body) => {
      events.push(body as Record<string, any>);
      return { status: 'success', message: 'Event processed' };
    });
}

async function setup(destinations: unknown[], options: { env?: Record<string, string> } = {}) {
  eventsApi();
  rig = await startDestinationRig(t.db, { env: { EVENTS_API_URL: `${EVENTS_HOST}/v2/enqueue`, PLATFORM_CHANNEL: 'C0PLATFORM', ...options.env } });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'C0ACME', destinations: JSON.stringify(destinations) });
  const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *' });
  const alert = await insertAlert(t.db, wf.id, { severity: 'critical', openedAt: at(0), escalateAt: null });
  return { rig, alert, wf };
}

const setDestinations = (destinations: unknown[]) => t.db.updateTable('tenants').set({ destinations: JSON.stringify(destinations) }).where('id', '=', 'acme').execute();
const resolve = (r: DestinationRig, alertId: number, m: number) => recordEvent(t.db, r.config, alertId, 'resolved', { now: at(m), changes: { status: 'resolved', resolvedAt: at(m) } });

/** Alice takes the alert (acknowledging it), delivered before anything later is recorded: an acknowledge still pending when the alert resolves is not sent. */
async function acknowledgeAndDeliver(rig: Awaited<ReturnType<typeof setup>>['rig'], alertId: number): Promise<void> {
  await recordEvent(t.db, rig.config, alertId, 'owner_changed', {
    now: at(5),
    actor: 'U0ALICE',
    changes: { ownerUser: 'U0ALICE', acknowledgedBy: 'U0ALICE', acknowledgedAt: at(5) },
    data: { toUser: 'U0ALICE', acknowledged: true },
  });
  await rig.drain();
}

describe('a PagerDuty routing key changed while an incident is open', () => {
  it('the resolve never goes to the new key; the old one configured nowhere, the thread names the incident left open and its row goes dead saying so', async () => {
    const { rig, alert } = await setup([pager(KEY_A)]);
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'critical' } });
    await rig.drain();
    expect(events.map((e) => [e.event_action, e.routing_key])).toEqual([['trigger', KEY_A]]);
    const dedupKey = events[0]!.dedup_key as string;

    await setDestinations([pager(KEY_B)]);
    const resolved = await resolve(rig, alert.id, 30);
    await rig.drain();

    // Nothing reaches B (it never heard of the incident), and A is nowhere to be found.
    expect(events.map((e) => [e.event_action, e.routing_key])).toEqual([['trigger', KEY_A]]);
    const idA = destinationId(pager(KEY_A) as never, undefined);
    expect(resolved.data).toMatchObject({ unresolvedIncidents: [{ destination: idA, dedupKey }] });
    const dead = await t.db.selectFrom('notifications').select(['destination', 'status', 'lastError']).where('eventId', '=', resolved.id).where('destination', 'like', 'pagerduty:%').execute();
    expect(dead).toEqual([{ destination: idA, status: 'dead', lastError: expect.stringContaining(dedupKey) }]);
    expect(dead[0]!.lastError).toContain('resolve it in PagerDuty');
    expect(dead[0]!.lastError).not.toContain(KEY_A);
    // The thread's recovery reply says which incident stays open, never the key.
    const texts = rig.slack.messages('C0ACME').map((m) => JSON.stringify(m));
    expect(texts.some((m) => m.includes(dedupKey) && m.includes('resolve it in PagerDuty'))).toBe(true);
    expect(texts.some((m) => m.includes(KEY_A))).toBe(false);
  });

  it('a PLATFORM key removed: the tenant\'s thread and webhook say a platform incident stays open without naming it; the platform channel names it', async () => {
    const { rig, alert } = await setup([], { env: { PLATFORM_DESTINATIONS: JSON.stringify([pager(KEY_A)]) } });
    await setDestinations(rig.destinations({ pagerduty: false }).filter((d) => d.kind === 'webhook'));
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'critical' } });
    await rig.drain();
    expect(events.map((e) => [e.event_action, e.routing_key])).toEqual([['trigger', KEY_A]]);
    const dedupKey = events[0]!.dedup_key as string;
    const idA = destinationId(pager(KEY_A) as never, undefined);

    (rig.config as { PLATFORM_DESTINATIONS: unknown[] }).PLATFORM_DESTINATIONS = [];
    const resolved = await resolve(rig, alert.id, 30);
    await rig.drain();
    expect(resolved.data).toMatchObject({ unresolvedIncidents: [{ destination: idA, dedupKey, configuredBy: 'platform' }] });
    const tenantSide = [...rig.slack.messages('C0ACME').map((m) => JSON.stringify(m)), ...rig.webhook.requests.map((r) => r.body)].join('\n');
    expect(tenantSide).toContain("A PagerDuty incident on the platform's service stays open");
    expect(tenantSide).not.toContain(idA);
    expect(tenantSide).not.toContain(dedupKey);
    const platform = rig.slack.messages('C0PLATFORM').map((m) => JSON.stringify(m));
    expect(platform.some((m) => m.includes(dedupKey) && m.includes(idA) && m.includes('resolve it in PagerDuty'))).toBe(true);
  });

  it('resolved by a run through the engine (the evaluator’s own routing read): the same note, nothing to the new key', async () => {
    const { rig, alert, wf } = await setup([pager(KEY_A)]);
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'critical' } });
    await rig.drain();
    const dedupKey = events[0]!.dedup_key as string;
    await setDestinations([pager(KEY_B)]);

    const engine = await createKeyedEngine(t.db, at(1), { EVENTS_API_URL: `${EVENTS_HOST}/v2/enqueue`, PLATFORM_CHANNEL: 'C0PLATFORM' });
    await reportRun(t.db, wf, null, { status: 'succeeded' }, at(1));
    await stepUntil(engine, at(3));
    const resolved = await t.db.selectFrom('alertEvents').select(['kind', 'data']).where('alertId', '=', alert.id).where('kind', '=', 'resolved').executeTakeFirstOrThrow();
    expect(resolved.data).toMatchObject({ unresolvedIncidents: [{ destination: destinationId(pager(KEY_A) as never, undefined), dedupKey }] });
    rig.clock.set(at(3));
    await rig.drain();
    expect(events.map((e) => [e.event_action, e.routing_key])).toEqual([['trigger', KEY_A]]);
  });

  it('the old key kept as `retired`: the resolve (and an acknowledge) go to it with the incident’s dedup key; a new alert pages the new key only', async () => {
    const { rig, alert, wf } = await setup([pager(KEY_A)]);
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'critical' } });
    await rig.drain();
    const dedupKey = events[0]!.dedup_key as string;

    await setDestinations([pager(KEY_B), pager(KEY_A, { retired: true })]);
    await acknowledgeAndDeliver(rig, alert.id);
    await resolve(rig, alert.id, 30);
    await rig.drain();
    expect(events.map((e) => [e.event_action, e.routing_key, e.dedup_key])).toEqual([
      ['trigger', KEY_A, dedupKey],
      ['acknowledge', KEY_A, dedupKey],
      ['resolve', KEY_A, dedupKey],
    ]);

    const next = await insertAlert(t.db, wf.id, { severity: 'critical', openedAt: at(60), escalateAt: null });
    await recordEvent(t.db, rig.config, next.id, 'opened', { now: at(60), data: { severity: 'critical' } });
    await rig.drain();
    expect(events.slice(3).map((e) => [e.event_action, e.routing_key])).toEqual([['trigger', KEY_B]]);
  });
});

describe('a PagerDuty key rotated while a warning is open, then the alert escalates', () => {
  // PagerDuty deduplicates per integration: the same dedup_key sent to two integration keys (even of one
  // service, the usual rotation) opens two incidents. The escalation goes to the incident's own (retired) key.
  const KEY_OPS = 'CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC';
  const escalate = (r: DestinationRig, alertId: number, m: number) =>
    recordEvent(t.db, r.config, alertId, 'escalated', { now: at(m), changes: { severity: 'critical', escalatedAt: at(m) }, data: { from: 'warning', to: 'critical', reason: 'kept_failing' } });
  const warningAt = async (destinations: unknown[]) => {
    const s = await setup(destinations);
    const alert = await t.db.updateTable('alerts').set({ severity: 'warning' }).where('id', '=', s.alert.id).returningAll().executeTakeFirstOrThrow();
    await recordEvent(t.db, s.rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'warning' } });
    await s.rig.drain();
    return { ...s, alert };
  };

  it('the key that replaced the retired one opens no second incident; a pager configured before the alert opened (critical only) still hears its escalation', async () => {
    const { rig, alert, wf } = await warningAt([pager(KEY_A, { minSeverity: 'warning' }), pager(KEY_OPS)]);
    expect(events.map((e) => [e.event_action, e.routing_key])).toEqual([['trigger', KEY_A]]);
    const dedupKey = events[0]!.dedup_key as string;

    await setDestinations([pager(KEY_B, { minSeverity: 'warning' }), pager(KEY_A, { minSeverity: 'warning', retired: true }), pager(KEY_OPS)]);
    await escalate(rig, alert.id, 20);
    await rig.drain();
    // Destinations deliver independently: their order is not asserted.
    expect(events.slice(1).map((e) => [e.event_action, e.routing_key, e.dedup_key]).sort()).toEqual([
      ['trigger', KEY_A, dedupKey],
      ['trigger', KEY_OPS, dedupKey],
    ]);

    // Resolved: both incidents close, nothing reaches the new key. A new alert pages the new key, not the retired one.
    await resolve(rig, alert.id, 30);
    await rig.drain();
    expect(events.slice(3).map((e) => [e.event_action, e.routing_key]).sort()).toEqual([['resolve', KEY_A], ['resolve', KEY_OPS]]);
    const next = await insertAlert(t.db, wf.id, { severity: 'critical', openedAt: at(60), escalateAt: null });
    await recordEvent(t.db, rig.config, next.id, 'opened', { now: at(60), data: { severity: 'critical' } });
    await rig.drain();
    expect(events.slice(5).map((e) => [e.event_action, e.routing_key]).sort()).toEqual([['trigger', KEY_B], ['trigger', KEY_OPS]]);
  });

  it('an alert the engine opens keeps the keys configured then (retired ones aside), written with the alert itself', async () => {
    const { wf } = await setup([pager(KEY_A), pager(KEY_OPS, { retired: true })]);
    await t.db.deleteFrom('alerts').execute();
    const engine = await createKeyedEngine(t.db, at(1), { EVENTS_API_URL: `${EVENTS_HOST}/v2/enqueue`, PLATFORM_CHANNEL: 'C0PLATFORM' });
    await reportRun(t.db, wf, T0, { status: 'failed', error: 'boom' }, at(1));
    await stepUntil(engine, at(3));
    const opened = await t.db.selectFrom('alerts').select(['status', 'pagersAtOpening']).where('workflowId', '=', wf.id).execute();
    expect(opened).toEqual([{ status: 'open', pagersAtOpening: [destinationId(pager(KEY_A) as never, undefined)] }]);
  });

  it('a key added while the alert is open, with no key retired, is a new destination: its incident opens at the escalation', async () => {
    const { rig, alert } = await warningAt([pager(KEY_A, { minSeverity: 'warning' })]);
    await setDestinations([pager(KEY_A, { minSeverity: 'warning' }), pager(KEY_B)]);
    await escalate(rig, alert.id, 20);
    await rig.drain();
    expect(events.slice(1).map((e) => [e.event_action, e.routing_key, e.dedup_key]).sort()).toEqual([['trigger', KEY_A, events[0]!.dedup_key], ['trigger', KEY_B, events[0]!.dedup_key]]);
  });
});

describe('dedup_key per installation', () => {
  it('namespaced by the database: two databases with the same alert id send different dedup keys', async () => {
    const { rig, alert } = await setup([pager(KEY_A)]);
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'critical' } });
    await rig.drain();
    const ours = events[0]!.dedup_key as string;
    expect(ours).toMatch(new RegExp(`^scheduler-bot:[0-9a-f]{12}:alert:${alert.id}$`));

    // Another installation is another database, with its own random key (migration 0019): same alert id, another dedup key.
    // (Test databases are clones of one template and so share the key, as a restored copy of a database would.)
    expect(dedupKeyFor(alert.id, installationOf(rig.config.destinationIdKey!))).toBe(ours);
    expect(dedupKeyFor(alert.id, installationOf('0'.repeat(64)))).not.toBe(ours);
    expect(ours).not.toContain(rig.config.destinationIdKey!.slice(0, 12));
  });

  it('an incident triggered before the upgrade (dedup key without the installation) is acknowledged and resolved under that same key', async () => {
    const { rig, alert } = await setup([pager(KEY_A)]);
    const opened = await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'critical' } });
    // As the version before this one delivered it.
    const legacy = `scheduler-bot:alert:${alert.id}`;
    await t.db
      .updateTable('notifications')
      .set({ status: 'sent', result: JSON.stringify({ action: 'trigger', dedupKey: legacy, status: 202 }) })
      .where('eventId', '=', opened.id)
      .execute();
    await acknowledgeAndDeliver(rig, alert.id);
    await resolve(rig, alert.id, 30);
    await rig.drain();
    expect(events.map((e) => [e.event_action, e.dedup_key])).toEqual([
      ['acknowledge', legacy],
      ['resolve', legacy],
    ]);
  });
});
