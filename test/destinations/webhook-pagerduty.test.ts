import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runLoop } from '../../src/engine/runner.js';
import { releaseHeldNotifications } from '../../src/ledger/alert-events.js';
import { endSilence } from '../../src/ledger/alert-actions.js';
import { dedupKeyFor, installationOf } from '../../src/domain/pagerduty-incident.js';
import { verifyLaunchSignature } from '../../src/launch/signature.js';
import { silentLogger } from '../../src/log.js';
import { claimNotifications } from '../../src/notify/claim-notifications.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeRun, makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { eventually } from '../helpers/eventually.js';
import { insertAlert } from '../helpers/slack-outbox.js';
import { HttpReceiver } from './http-receiver.js';
import { recordEvent, ROUTING_KEY, startDestinationRig, WEBHOOK_SECRET, endDestinationTest, type DestinationRig } from './rig.js';

let t: TestDatabase;
let rig: DestinationRig | undefined;
const at = (m: number) => new Date(T0.getTime() + m * 60_000);

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.drop());
afterEach(async () => {
  await endDestinationTest(t.db, rig);
  rig = undefined;
});

async function setup(kind: 'webhook' | 'pagerduty', severity: 'warning' | 'critical' = 'critical') {
  rig = await startDestinationRig(t.db);
  const destinations = rig.destinations().filter((d) => d.kind === kind);
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: null, destinations: JSON.stringify(destinations) });
  const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *' });
  const alert = await insertAlert(t.db, wf.id, { severity, openedAt: at(0), escalateAt: null, errorGroupCount: 4, lastError: 'relation "orders" does not exist' });
  return { rig, alert };
}

const body = (r: { body: string }) => JSON.parse(r.body) as Record<string, any>;
/** The dedup_key of an alert's incident: namespaced by this database's installation (src/domain/pagerduty-incident.ts). */
const dedup = (alertId: number) => dedupKeyFor(alertId, installationOf(rig!.config.destinationIdKey!));

describe('webhook destination', () => {
  it('posts each event once as signed JSON with an Idempotency-Key; the signature verifies with the README snippet’s check', async () => {
    const { rig, alert } = await setup('webhook');
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'critical' } });
    await rig.drain();
    await recordEvent(t.db, rig.config, alert.id, 'owner_changed', {
      now: at(5),
      actor: 'U0ALICE',
      changes: { ownerUser: 'U0ALICE', acknowledgedBy: 'U0ALICE', acknowledgedAt: at(5) },
      data: { fromTeam: 'engineering', toTeam: 'engineering', toUser: 'U0ALICE', acknowledged: true },
    });
    await recordEvent(t.db, rig.config, alert.id, 'resolved', { now: at(30), changes: { status: 'resolved', resolvedAt: at(30) }, data: { runId: 9 } });
    await rig.drain();

    const got = rig.webhook.requests;
    expect(got.map((r) => body(r).event)).toEqual(['opened', 'owner_changed', 'resolved']);
    const rows = await t.db.selectFrom('notifications').select(['idempotencyKey', 'status']).orderBy('id').execute();
    expect(got.map((r) => r.headers['idempotency-key'])).toEqual(rows.map((r) => r.idempotencyKey));
    expect(rows.every((r) => r.status === 'sent')).toBe(true);
    for (const r of got) {
      expect(r.path).toBe('/hooks/scheduler');
      expect(r.headers['content-type']).toBe('application/json');
      const signed = { body: r.body, timestamp: r.headers['x-scheduler-timestamp'] as string, signature: r.headers['x-scheduler-signature'] as string };
      // The receiver's clock when it arrived is the sender's when it left.
      const arrived = new Date(Number(signed.timestamp) * 1000);
      expect(verifyLaunchSignature(WEBHOOK_SECRET, signed, arrived)).toEqual({ ok: true });
      expect(verifyLaunchSignature('another-secret-0123456789', signed, arrived)).toEqual({ ok: false, reason: 'bad_signature' });
      expect(verifyLaunchSignature(WEBHOOK_SECRET, { ...signed, body: signed.body.replace('acme', 'evil') }, arrived)).toEqual({ ok: false, reason: 'bad_signature' });
    }
    expect(body(got[0]!)).toMatchObject({
      idempotencyKey: rows[0]!.idempotencyKey,
      event: 'opened',
      alert: { id: alert.id, generation: 1, severity: 'critical', status: 'open', consecutiveFailures: 3, errorGroup: { id: 'g1', count: 4 }, owner: { team: 'engineering', user: null } },
      tenant: { id: 'acme', name: 'Acme' },
      workflow: { name: 'nightly-pipeline', cron: '0 2 * * *' },
      links: { workflow: 'https://scheduler.example.com/api/v1/workflows/acme/nightly-pipeline' },
    });
    expect(body(got[1]!).alert.owner).toMatchObject({ user: 'U0ALICE' });
    expect(body(got[2]!)).toMatchObject({ event: 'resolved', alert: { status: 'resolved' }, data: { runId: 9 } });
  });

  it('a stored header differing only in case from one the bot sets (written before the check) is left out: the bot’s own arrive alone, other headers as configured', async () => {
    rig = await startDestinationRig(t.db);
    const headers = { 'idempotency-key': 'mine', 'x-scheduler-signature': 'v1=forged', 'x-scheduler-event': 'other', 'content-type': 'text/plain', 'X-Team': 'data' };
    await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: null, destinations: JSON.stringify([{ ...rig.destinations()[1]!, headers }]) });
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *' });
    const alert = await insertAlert(t.db, wf.id, { severity: 'critical', openedAt: at(0), escalateAt: null });
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    await rig.drain();
    const [got] = rig.webhook.accepted();
    const row = await t.db.selectFrom('notifications').select('idempotencyKey').executeTakeFirstOrThrow();
    expect(got!.headers).toMatchObject({ 'idempotency-key': row.idempotencyKey, 'x-scheduler-event': 'opened', 'content-type': 'application/json', 'x-team': 'data' });
    const signed = { body: got!.body, timestamp: got!.headers['x-scheduler-timestamp'] as string, signature: got!.headers['x-scheduler-signature'] as string };
    expect(verifyLaunchSignature(WEBHOOK_SECRET, signed, new Date(Number(signed.timestamp) * 1000))).toEqual({ ok: true });
  });

  it('carries the alert’s last run as the claim read it: its stage and its log link', async () => {
    const { rig, alert } = await setup('webhook');
    const run = await makeRun(t.db, { workflowId: alert.workflowId, tick: at(0), status: 'failed', stage: 'load orders', logUrl: 'https://ci.acme.example.com/runs/77' });
    await t.db.updateTable('alerts').set({ lastRunId: run.id, stage: null }).where('id', '=', alert.id).execute();
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    await rig.drain();
    expect(body(rig.webhook.accepted()[0]!)).toMatchObject({ alert: { stage: 'load orders' }, links: { log: 'https://ci.acme.example.com/runs/77' } });
  });

  it('alert.silencedUntil reports a silence only while it is in force: the resolved payload of a silenced alert says null', async () => {
    const { rig, alert } = await setup('webhook');
    await recordEvent(t.db, rig.config, alert.id, 'silenced', { now: at(1), actor: 'U0BOB', changes: { silencedBy: 'U0BOB', silencedUntil: at(60) }, data: { until: at(60).toISOString() } });
    await rig.drain();
    // Resolving ends the silence; the columns are left as they were, the rule in src/domain/silence.ts decides.
    await recordEvent(t.db, rig.config, alert.id, 'resolved', { now: at(2), changes: { status: 'resolved', resolvedAt: at(2) }, data: { runId: 9 } });
    await rig.drain();
    const got = rig.webhook.requests.map(body);
    expect(got.map((b) => [b.event, b.alert.silencedUntil])).toEqual([
      ['silenced', at(60).toISOString()],
      ['resolved', null],
    ]);
  });

  it('500 then 200: retried with backoff under the same key, delivered once; a 429 waits Retry-After; a 404 goes dead', async () => {
    const { rig, alert } = await setup('webhook');
    rig.webhook.answer({ status: 500, body: 'oops' }, { status: 429, headers: { 'Retry-After': '7' } });
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    const start = rig.clock.now().getTime();
    await rig.drain();
    const got = rig.webhook.requests;
    expect(got.map((r) => r.status)).toEqual([500, 429, 200]);
    expect(new Set(got.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    expect(rig.webhook.accepted()).toHaveLength(1);
    // The third attempt came no sooner than Retry-After after the second.
    expect(rig.clock.now().getTime() - start).toBeGreaterThanOrEqual(1000 + 7000);
    const row = await t.db.selectFrom('notifications').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'sent', attempts: 1 });

    rig.webhook.answer({ status: 404, body: 'no such hook' });
    await recordEvent(t.db, rig.config, alert.id, 'resolved', { now: at(10), changes: { status: 'resolved', resolvedAt: at(10) } });
    await rig.drain();
    const dead = await t.db.selectFrom('notifications').selectAll().where('status', '=', 'dead').executeTakeFirstOrThrow();
    expect(dead.lastError).toBe('HTTP 404: no such hook');
  });

  it('a 429 asking to wait years (Retry-After: 99999999) holds the host for 10 minutes at most, not for years', async () => {
    const { rig, alert } = await setup('webhook');
    rig.webhook.answer({ status: 429, headers: { 'Retry-After': '99999999' } });
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    const start = rig.clock.now().getTime();
    await rig.drain({ maxClockMs: 15 * 60_000 });
    expect(rig.webhook.requests.map((r) => r.status)).toEqual([429, 200]);
    const waited = rig.clock.now().getTime() - start;
    expect(waited).toBeGreaterThanOrEqual(10 * 60_000);
    expect(waited).toBeLessThanOrEqual(10 * 60_000 + 1000);
  });

  it('the answer is recorded as sent before anything else, the pace included: a replica dying after the receiver answered has one statement to outlive', async () => {
    const { rig, alert } = await setup('webhook');
    const seen: string[] = [];
    const hold = rig.sender.pacer.hold.bind(rig.sender.pacer);
    rig.sender.pacer.hold = async (...args) => {
      const row = await t.db.selectFrom('notifications').select('status').executeTakeFirstOrThrow();
      seen.push(row.status);
      return hold(...args);
    };
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    await rig.drain();
    expect(rig.webhook.accepted()).toHaveLength(1);
    // The webhook is paced (per receiving host), and when its pace was held the row already said sent.
    expect(seen).toEqual(['sent']);
  });

  it('a row whose sender died holding it (claimed, maybe posted, never settled) waits out its lease, then goes again with the same key: late, maybe twice, never lost', async () => {
    const { rig, alert } = await setup('webhook');
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    // Another replica claims it and dies before recording anything.
    const [held] = await claimNotifications(t.db, { now: rig.clock.now(), owner: 'dead-replica', leaseMs: 60_000, limit: 1, kinds: ['webhook'], exclude: [] });
    expect(held).toBeDefined();
    expect(await rig.sender.tick()).toBe(false);
    expect(rig.webhook.requests).toHaveLength(0);
    rig.clock.advance(60_000);
    expect(await rig.sender.tick()).toBe(true);
    expect(rig.webhook.accepted().map((r) => r.headers['idempotency-key'])).toEqual([held!.row.idempotencyKey]);
    expect(await t.db.selectFrom('notifications').select(['status', 'leaseOwner']).executeTakeFirstOrThrow()).toEqual({ status: 'sent', leaseOwner: null });
  });

  it('connection cut after the request arrived: resent with the same key; the receiver can drop the repeat', async () => {
    const { rig, alert } = await setup('webhook');
    rig.webhook.answer({ status: 200, drop: true });
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    await rig.drain();
    const keys = rig.webhook.requests.map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
    expect(rig.webhook.accepted()).toHaveLength(1);
  });
});

describe('pagerduty destination', () => {
  it('trigger on opened, acknowledge on take ownership, resolve on resolved, one dedup_key per alert; other events send nothing', async () => {
    const { rig, alert } = await setup('pagerduty');
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'critical' } });
    await recordEvent(t.db, rig.config, alert.id, 'run_requested', { now: at(1), actor: 'U0ALICE', data: { runId: 5 } });
    await rig.drain();
    await recordEvent(t.db, rig.config, alert.id, 'owner_changed', {
      now: at(2),
      actor: 'U0ALICE',
      changes: { ownerUser: 'U0ALICE', acknowledgedBy: 'U0ALICE', acknowledgedAt: at(2) },
      data: { toUser: 'U0ALICE', acknowledged: true },
    });
    await rig.drain();
    await recordEvent(t.db, rig.config, alert.id, 'resolved', { now: at(30), changes: { status: 'resolved', resolvedAt: at(30) } });
    await rig.drain();

    const events = rig.pagerduty.requests.map(body);
    expect(events.map((e) => e.event_action)).toEqual(['trigger', 'acknowledge', 'resolve']);
    expect(new Set(events.map((e) => e.dedup_key))).toEqual(new Set([dedup(alert.id)]));
    expect(events.every((e) => e.routing_key === ROUTING_KEY)).toBe(true);
    expect(rig.pagerduty.requests[0]!.path).toBe('/v2/enqueue');
    expect(events[0]).toMatchObject({
      payload: { severity: 'critical', source: 'scheduler-bot/acme', component: 'nightly-pipeline', group: 'acme', class: 'g1' },
    });
    expect(events[0]!.payload.summary).toContain('Acme / nightly-pipeline');
    // run_requested is not one of the events pagerduty asks for: no row at all.
    const kinds = await t.db.selectFrom('notifications').innerJoin('alertEvents', 'alertEvents.id', 'notifications.eventId').select('alertEvents.kind').orderBy('notifications.id').execute();
    expect(kinds.map((k) => k.kind)).toEqual(['opened', 'owner_changed', 'resolved']);
  });

  it('a warning never pages; once it escalates, trigger (critical) then resolve', async () => {
    const { rig, alert } = await setup('pagerduty', 'warning');
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'warning' } });
    await rig.drain();
    expect(rig.pagerduty.requests).toEqual([]);
    await recordEvent(t.db, rig.config, alert.id, 'escalated', { now: at(15), changes: { severity: 'critical', escalatedAt: at(15) }, data: { from: 'warning', to: 'critical' } });
    await rig.drain();
    await recordEvent(t.db, rig.config, alert.id, 'resolved', { now: at(30), changes: { status: 'resolved', resolvedAt: at(30) } });
    await rig.drain();
    expect(rig.pagerduty.requests.map((r) => [body(r).event_action, body(r).payload?.severity])).toEqual([
      ['trigger', 'critical'],
      ['resolve', undefined],
    ]);
  });

  it('a trigger held (PagerDuty down) until the alert has resolved pages nobody: the resolve alone goes, the trigger settled as skipped', async () => {
    const { rig, alert } = await setup('pagerduty', 'critical');
    rig.pagerduty.answer({ status: 503, body: '{"message":"down"}' });
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'critical' } });
    await rig.sender.tick();
    expect(rig.pagerduty.requests.map((r) => body(r).event_action)).toEqual(['trigger']);
    expect(rig.pagerduty.accepted()).toEqual([]);
    // The next run succeeds before PagerDuty answers again.
    await recordEvent(t.db, rig.config, alert.id, 'resolved', { now: at(1), changes: { status: 'resolved', resolvedAt: at(1) } });
    await rig.drain();
    expect(rig.pagerduty.accepted().map((r) => body(r).event_action)).toEqual(['resolve']);
    const rows = await t.db.selectFrom('notifications').select(['status', 'result']).orderBy('id').execute();
    expect(rows.map((r) => r.status)).toEqual(['skipped', 'sent']);
    expect(JSON.stringify(rows[0]!.result)).toContain('resolved before this trigger could be sent');
  });

  it('a shadow alert a person took, going live: triggered and acknowledged at once (no acknowledgement of its own follows)', async () => {
    const { rig, alert } = await setup('pagerduty', 'critical');
    await t.db.updateTable('alerts').set({ ownerUser: 'U0ALICE', acknowledgedBy: 'U0ALICE', acknowledgedAt: at(5) }).where('id', '=', alert.id).execute();
    await recordEvent(t.db, rig.config, alert.id, 'went_live', { now: at(10) });
    await rig.drain();
    expect(rig.pagerduty.accepted().map((r) => [body(r).event_action, body(r).dedup_key])).toEqual([
      ['trigger', dedup(alert.id)],
      ['acknowledge', dedup(alert.id)],
    ]);
    // Unowned, it pages as before.
    const wf2 = await makeWorkflow(t.db, { tenantId: 'acme', name: 'hourly-export', cron: '0 * * * *' });
    const other = await insertAlert(t.db, wf2.id, { severity: 'critical', openedAt: at(20), escalateAt: null });
    await recordEvent(t.db, rig.config, other.id, 'went_live', { now: at(20) });
    await rig.drain();
    expect(rig.pagerduty.accepted().slice(2).map((r) => body(r).event_action)).toEqual(['trigger']);
  });

  it('a warning silenced for an hour escalates meanwhile: when the silence ends on the still-open alert, PagerDuty is triggered (critical); a silence the resolve ends pages nobody', async () => {
    const { rig, alert } = await setup('pagerduty', 'warning');
    const silence = { silencedBy: 'U0BOB', silencedUntil: at(60) };
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'warning' } });
    await recordEvent(t.db, rig.config, alert.id, 'silenced', { now: at(1), actor: 'U0BOB', changes: silence, data: { until: at(60).toISOString() } });
    await recordEvent(t.db, rig.config, alert.id, 'escalated', { now: at(15), changes: { severity: 'critical', escalatedAt: at(15) }, data: { from: 'warning', to: 'critical' } });
    await rig.drain();
    expect(rig.pagerduty.requests).toEqual([]);
    // The silence runs out (the escalation clock's endSilence), the alert still open and critical, nobody owning it.
    await t.db.transaction().execute(async (trx) => {
      const current = await trx.selectFrom('alerts').selectAll().where('id', '=', alert.id).executeTakeFirstOrThrow();
      await endSilence(trx, current, { channel: null }, null, 'expired', at(60), rig.config);
    });
    await rig.drain();
    expect(rig.pagerduty.accepted().map((r) => [body(r).event_action, body(r).payload?.severity])).toEqual([['trigger', 'critical']]);
    await recordEvent(t.db, rig.config, alert.id, 'resolved', { now: at(90), changes: { status: 'resolved', resolvedAt: at(90) } });
    await rig.drain();
    expect(rig.pagerduty.accepted().map((r) => body(r).event_action)).toEqual(['trigger', 'resolve']);

    // Another warning, silenced, escalated, then resolved while still silenced: the incident is over, nobody is paged for it.
    const other = await insertAlert(t.db, alert.workflowId, { severity: 'warning', openedAt: at(100), escalateAt: null });
    await recordEvent(t.db, rig.config, other.id, 'opened', { now: at(100), data: { severity: 'warning' } });
    await recordEvent(t.db, rig.config, other.id, 'silenced', { now: at(101), actor: 'U0BOB', changes: { silencedBy: 'U0BOB', silencedUntil: null }, data: { until: 'resolved' } });
    await recordEvent(t.db, rig.config, other.id, 'escalated', { now: at(115), changes: { severity: 'critical', escalatedAt: at(115) }, data: { from: 'warning', to: 'critical' } });
    await t.db.transaction().execute(async (trx) => {
      const next = await trx.updateTable('alerts').set({ status: 'resolved', resolvedAt: at(130) }).where('id', '=', other.id).returningAll().executeTakeFirstOrThrow();
      await releaseHeldNotifications(trx, next);
    });
    await recordEvent(t.db, rig.config, other.id, 'resolved', { now: at(130) });
    await rig.drain();
    expect(rig.pagerduty.accepted().map((r) => body(r).dedup_key)).toEqual([dedup(alert.id), dedup(alert.id)]);
  });

  it('a pager set to hear warnings, paged at warning, the alert escalating while silenced: the silence ends with the held escalation, so the incident becomes critical', async () => {
    rig = await startDestinationRig(t.db);
    const destinations = rig.destinations().filter((d) => d.kind === 'pagerduty').map((d) => ({ ...d, minSeverity: 'warning' }));
    await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: null, destinations: JSON.stringify(destinations) });
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *' });
    const alert = await insertAlert(t.db, wf.id, { severity: 'warning', openedAt: at(0), escalateAt: null, errorGroupCount: 4, lastError: 'relation "orders" does not exist' });
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'warning' } });
    await rig.drain();
    expect(rig.pagerduty.accepted().map((r) => [body(r).event_action, body(r).payload?.severity])).toEqual([['trigger', 'warning']]);
    await recordEvent(t.db, rig.config, alert.id, 'silenced', { now: at(1), actor: 'U0BOB', changes: { silencedBy: 'U0BOB', silencedUntil: at(60) }, data: { until: at(60).toISOString() } });
    await recordEvent(t.db, rig.config, alert.id, 'escalated', { now: at(15), changes: { severity: 'critical', escalatedAt: at(15) }, data: { from: 'warning', to: 'critical' } });
    await rig.drain();
    expect(rig.pagerduty.accepted()).toHaveLength(1);
    await t.db.transaction().execute(async (trx) => {
      const current = await trx.selectFrom('alerts').selectAll().where('id', '=', alert.id).executeTakeFirstOrThrow();
      await endSilence(trx, current, { channel: null }, null, 'expired', at(60), rig!.config);
    });
    await rig.drain();
    expect(rig.pagerduty.accepted().map((r) => [body(r).event_action, body(r).payload?.severity])).toEqual([
      ['trigger', 'warning'],
      ['trigger', 'critical'],
    ]);
  });

  it('taken while silenced: when the silence ends, the held trigger is followed by the held acknowledge, so PagerDuty pages nobody for an alert a person owns', async () => {
    const { rig, alert } = await setup('pagerduty', 'warning');
    const take = (id: number, now: Date) =>
      recordEvent(t.db, rig.config, id, 'owner_changed', {
        now,
        actor: 'U0ALICE',
        changes: { ownerUser: 'U0ALICE', acknowledgedBy: 'U0ALICE', acknowledgedAt: now },
        data: { fromTeam: 'engineering', toTeam: 'engineering', toUser: 'U0ALICE', acknowledged: true },
      });
    const expire = (id: number, now: Date) =>
      t.db.transaction().execute(async (trx) => {
        const current = await trx.selectFrom('alerts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        await endSilence(trx, current, { channel: null }, null, 'expired', now, rig.config);
      });
    // A warning, silenced; it escalates under the silence (PagerDuty's opening, held), then Alice takes it (held too).
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'warning' } });
    await recordEvent(t.db, rig.config, alert.id, 'silenced', { now: at(1), actor: 'U0BOB', changes: { silencedBy: 'U0BOB', silencedUntil: at(60) }, data: { until: at(60).toISOString() } });
    await recordEvent(t.db, rig.config, alert.id, 'escalated', { now: at(15), changes: { severity: 'critical', escalatedAt: at(15) }, data: { from: 'warning', to: 'critical' } });
    await take(alert.id, at(20));
    await rig.drain();
    expect(rig.pagerduty.requests).toEqual([]);
    await expire(alert.id, at(60));
    await rig.drain();
    expect(rig.pagerduty.accepted().map((r) => [body(r).event_action, body(r).dedup_key])).toEqual([
      ['trigger', dedup(alert.id)],
      ['acknowledge', dedup(alert.id)],
    ]);

    await recordEvent(t.db, rig.config, alert.id, 'resolved', { now: at(90), changes: { status: 'resolved', resolvedAt: at(90) } });
    await rig.drain();
    expect(rig.pagerduty.accepted().map((r) => body(r).event_action)).toEqual(['trigger', 'acknowledge', 'resolve']);

    // A critical alert paged before its silence, taken during it: the acknowledge is not lost with the other held replies.
    const other = await insertAlert(t.db, alert.workflowId, { severity: 'critical', openedAt: at(100), escalateAt: null });
    await recordEvent(t.db, rig.config, other.id, 'opened', { now: at(100), data: { severity: 'critical' } });
    await rig.drain();
    await recordEvent(t.db, rig.config, other.id, 'silenced', { now: at(101), actor: 'U0BOB', changes: { silencedBy: 'U0BOB', silencedUntil: at(160) }, data: { until: at(160).toISOString() } });
    await take(other.id, at(110));
    await expire(other.id, at(160));
    await rig.drain();
    expect(rig.pagerduty.accepted().slice(3).map((r) => [body(r).event_action, body(r).dedup_key])).toEqual([
      ['trigger', dedup(other.id)],
      ['acknowledge', dedup(other.id)],
    ]);
  });

  it('released while silenced: ownership taken and given back under the silence acknowledges nothing when it ends', async () => {
    const { rig, alert } = await setup('pagerduty', 'critical');
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0), data: { severity: 'critical' } });
    await recordEvent(t.db, rig.config, alert.id, 'silenced', { now: at(1), actor: 'U0BOB', changes: { silencedBy: 'U0BOB', silencedUntil: at(60) }, data: { until: at(60).toISOString() } });
    await recordEvent(t.db, rig.config, alert.id, 'owner_changed', {
      now: at(10),
      actor: 'U0ALICE',
      changes: { ownerUser: 'U0ALICE', acknowledgedBy: 'U0ALICE', acknowledgedAt: at(10) },
      data: { fromTeam: 'engineering', toTeam: 'engineering', toUser: 'U0ALICE', acknowledged: true },
    });
    await recordEvent(t.db, rig.config, alert.id, 'owner_changed', {
      now: at(20),
      actor: 'U0ALICE',
      changes: { ownerUser: null, acknowledgedBy: null, acknowledgedAt: null },
      data: { fromTeam: 'engineering', toTeam: 'engineering', fromUser: 'U0ALICE', action: 'release' },
    });
    await t.db.transaction().execute(async (trx) => {
      const current = await trx.selectFrom('alerts').selectAll().where('id', '=', alert.id).executeTakeFirstOrThrow();
      await endSilence(trx, current, { channel: null }, null, 'expired', at(60), rig.config);
    });
    await rig.drain();
    expect(rig.pagerduty.accepted().map((r) => body(r).event_action)).toEqual(['trigger']);
  });

  it('429 from the Events API: waits Retry-After and sends again; nothing lost, each action accepted once', async () => {
    const { rig, alert } = await setup('pagerduty');
    rig.pagerduty.answer({ status: 429, headers: { 'Retry-After': '3' }, body: '{"status":"throttle event"}' });
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    await rig.drain();
    await recordEvent(t.db, rig.config, alert.id, 'resolved', { now: at(0), changes: { status: 'resolved', resolvedAt: at(0) } });
    await rig.drain();
    expect(rig.pagerduty.requests.map((r) => [r.status, body(r).event_action])).toEqual([
      [429, 'trigger'],
      [202, 'trigger'],
      [202, 'resolve'],
    ]);
    const accepted = rig.pagerduty.accepted().map((r) => body(r).event_action);
    expect(accepted).toEqual(['trigger', 'resolve']);
    const rows = await t.db.selectFrom('notifications').select(['status', 'attempts']).orderBy('id').execute();
    // A rate limit is not a failed attempt.
    expect(rows).toEqual([
      { status: 'sent', attempts: 0 },
      { status: 'sent', attempts: 0 },
    ]);
  });

  it('a 400 (bad routing key) goes dead with PagerDuty’s message', async () => {
    const { rig, alert } = await setup('pagerduty');
    rig.pagerduty.answer({ status: 400, body: '{"status":"invalid event","message":"Event object is invalid"}' });
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    await rig.drain();
    const row = await t.db.selectFrom('notifications').selectAll().executeTakeFirstOrThrow();
    expect(row.status).toBe('dead');
    expect(row.lastError).toContain('Event object is invalid');
  });
});

describe('outbox sender loop, woken while it delivers', () => {
  it('a wake-up reaches a drain busy with a slow receiver: another destination’s new row goes at once, on a clock that never moves', async () => {
    // A receiver slower than any test: its request must not time out and end the drain's wait that way.
    rig = await startDestinationRig(t.db, { timeoutMs: 10 * 60_000 });
    const other = await HttpReceiver.start();
    let answerSlow!: () => void;
    rig.webhook.answer({ status: 200, after: new Promise<void>((resolve) => (answerSlow = resolve)) });
    await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: null, destinations: JSON.stringify(rig.destinations().filter((d) => d.kind === 'webhook')) });
    await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: null, destinations: JSON.stringify([{ kind: 'webhook', url: `${other.url}/hook`, secret: WEBHOOK_SECRET }]) });
    const slow = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme', name: 'slow' })).id);
    const fast = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'globex', name: 'fast' })).id);
    const stop = new AbortController();
    const loop = runLoop(rig.sender.loop, { clock: rig.clock, logger: silentLogger, signal: stop.signal });
    try {
      await recordEvent(t.db, rig.config, slow.id, 'opened', { now: at(0) });
      loop.wake();
      await eventually(() => expect(rig!.webhook.requests).toHaveLength(1));
      // The drain is now waiting on the slow receiver and, between looks, on a clock that never moves.
      await recordEvent(t.db, rig.config, fast.id, 'opened', { now: at(0) });
      loop.wake();
      await eventually(() => expect(other.accepted()).toHaveLength(1));
      expect(rig.webhook.accepted()).toHaveLength(0);
      expect(await t.db.selectFrom('notifications').select(['status', 'attempts']).where('alertId', '=', slow.id).executeTakeFirstOrThrow()).toEqual({ status: 'sending', attempts: 0 });
      answerSlow();
      await eventually(() => expect(rig!.webhook.accepted()).toHaveLength(1));
    } finally {
      answerSlow();
      stop.abort();
      await loop.done;
      await other.close();
    }
  });
});
