import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { Alert, Workflow } from '../../src/db/schema.js';
import { dedupKeyFor, installationOf } from '../../src/domain/pagerduty-incident.js';
import { verifyLaunchSignature } from '../../src/launch/signature.js';
import { requestRunNow } from '../../src/services/run-now.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createKeyedEngine, driveSeedNight, PLATFORM, type Engine, type SeedOutcome } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { startDestinationRig, WEBHOOK_SECRET, type DestinationRig } from './rig.js';

/**
 * The seed's genuine-defect night (as in test/engine/seed-night.test.ts),
 * with the tenant routed to Slack, email, a webhook and PagerDuty. The real
 * engine records the events; the real sender delivers them every minute to
 * the recording Slack API, a loopback SMTP server and two loopback HTTP
 * receivers. Nothing in the engine knows about email, webhooks or PagerDuty.
 */
const NIGHT = new Date('2026-03-10T01:59:00Z');
const at = (hhmm: string) => new Date(`2026-03-10T${hhmm}:00Z`);

let t: TestDatabase;
let engine: Engine;
let rig: DestinationRig;
let nightly: Workflow;
let check: Workflow;

beforeEach(async () => {
  t = await createTestDatabase();
  engine = await createKeyedEngine(t.db, NIGHT);
  rig = await startDestinationRig(t.db, { clock: new ManualClock(NIGHT) });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', destinations: JSON.stringify(rig.destinations()) });
  const launcher = JSON.stringify({ kind: 'command', command: 'true' });
  nightly = await makeWorkflow(t.db, { name: 'nightly-pipeline', cron: '0 2 * * *', mode: 'managed', launcher });
  check = await makeWorkflow(t.db, { name: 'quality-check', cron: '*/5 * * * *', mode: 'managed', launcher });
});
afterEach(async () => {
  await rig.close();
  await t.drop();
});

async function deliver() {
  const now = engine.clock.now();
  if (now > rig.clock.now()) rig.clock.set(now);
  await rig.drain();
}

/** The seed night to `until`, delivering every minute after the engine steps. */
const night = (until: Date, outcomeFor: SeedOutcome, beforeStep?: (now: Date) => Promise<void>) => driveSeedNight(engine, { nightly, check }, until, outcomeFor, { beforeStep, afterStep: deliver });

describe('the genuine-defect night, told everywhere', () => {
  it('Slack, email and the webhook tell the same story; PagerDuty gets a trigger/resolve pair per critical alert', async () => {
    await night(
      at('09:10'),
      (w, tick) => (w.id === nightly.id ? 'fail' : tick >= at('02:05') && tick < at('09:05') ? 'fail' : 'ok'),
      async (now) => {
        if (now.getTime() !== at('09:00').getTime()) return;
        engine.launcher.script(nightly.id, { status: 'succeeded', rows: 1200 });
        expect((await requestRunNow(engine.deps, { workflowId: nightly.id, actor: { user: 'U0FIXER' }, scope: { tenantId: 'acme' } })).kind).toBe('started');
      },
    );

    const [pipeline, quality] = (await t.db.selectFrom('alerts').selectAll().orderBy('id').execute()) as [Alert, Alert];
    expect([pipeline.workflowId, pipeline.status, quality.workflowId, quality.status, quality.escalatedAt]).toEqual([nightly.id, 'resolved', check.id, 'resolved', at('02:33')]);
    const stories = new Map([
      [pipeline.id, ['opened', 'run_requested', 'run_finished', 'resolved']],
      // Escalated, nobody took it: the on-call is paged again, backing off (30 min, 30 min, 1 h, 2 h), until the recovery.
      [quality.id, ['opened', 'escalated', 'reminder', 'reminder', 'reminder', 'reminder', 'resolved']],
    ]);

    // Everything delivered, nothing dead, nothing twice.
    const rows = await t.db.selectFrom('notifications').select(['status', 'idempotencyKey', 'destination']).execute();
    expect(new Set(rows.map((r) => r.status))).toEqual(new Set(['sent']));

    // Slack: one thread per alert in each channel, replies in the story's order.
    for (const channel of ['CACME', PLATFORM]) {
      const roots = rig.slack.roots(channel);
      expect(roots).toHaveLength(2);
      for (const root of roots) {
        const alertId = root.metadata!.event_payload.alert_id as number;
        const told = [root, ...rig.slack.replies(channel, root.ts)].map((m) => m.metadata!.event_payload.event);
        expect(told).toEqual(stories.get(alertId));
      }
    }

    // Email: one thread per alert, the same story, threading headers right.
    const mails = rig.smtp.mailbox();
    expect(rig.smtp.received).toHaveLength(mails.length);
    for (const [alertId, story] of stories) {
      const thread = mails.filter((m) => m.headers.get('x-scheduler-alert') === String(alertId));
      expect(thread.map((m) => m.headers.get('x-scheduler-event'))).toEqual(story);
      const rootId = thread[0]!.headers.get('message-id');
      expect(thread[0]!.headers.has('in-reply-to')).toBe(false);
      for (const reply of thread.slice(1)) {
        expect(reply.headers.get('in-reply-to')).toBe(rootId);
        expect(reply.headers.get('references')).toBe(rootId);
        expect(reply.headers.get('subject')).toBe(`Re: ${thread[0]!.headers.get('subject')}`);
      }
    }
    expect(mails.find((m) => m.headers.get('x-scheduler-alert') === String(pipeline.id))!.headers.get('subject')).toBe(`[Critical] Acme / nightly-pipeline (alert #${pipeline.id})`);
    expect(mails.find((m) => m.headers.get('x-scheduler-alert') === String(quality.id))!.headers.get('subject')).toBe(`[Warning] Acme / quality-check (alert #${quality.id})`);

    // Webhook: one delivery per event, each signed, keys unique.
    const hooks = rig.webhook.requests;
    expect(hooks.every((r) => r.status === 200)).toBe(true);
    expect(new Set(hooks.map((r) => r.headers['idempotency-key'])).size).toBe(hooks.length);
    for (const r of hooks) {
      const signed = { body: r.body, timestamp: r.headers['x-scheduler-timestamp'] as string, signature: r.headers['x-scheduler-signature'] as string };
      expect(verifyLaunchSignature(WEBHOOK_SECRET, signed, new Date(Number(signed.timestamp) * 1000))).toEqual({ ok: true });
    }
    for (const [alertId, story] of stories) {
      expect(hooks.map((r) => JSON.parse(r.body)).filter((b) => b.alert.id === alertId).map((b) => b.event)).toEqual(story);
    }

    // PagerDuty: trigger then resolve per alert; the warning paged only when it escalated to critical.
    const pages = rig.pagerduty.requests.map((r) => JSON.parse(r.body));
    for (const alert of [pipeline, quality]) {
      expect(pages.filter((p) => p.dedup_key === dedupKeyFor(alert.id, installationOf(rig.config.destinationIdKey!))).map((p) => p.event_action)).toEqual(['trigger', 'resolve']);
    }
    const qualityTrigger = pages.find((p) => p.dedup_key === dedupKeyFor(quality.id, installationOf(rig.config.destinationIdKey!)));
    expect(qualityTrigger.payload).toMatchObject({ severity: 'critical', custom_details: { event: 'escalated' } });
    expect(new Date(qualityTrigger.payload.timestamp)).toEqual(at('02:33'));
  }, 120_000); // a whole night through the real engine and four transports: slow on a loaded 2-core machine
});
