import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { eventually } from '../helpers/eventually.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { insertAlert } from '../helpers/slack-outbox.js';
import { endDestinationTest, recordEvent, startDestinationRig, type DestinationRig } from './rig.js';

/**
 * A webhook receiver that accepts the connection and the request and never
 * answers. Its request is cut at the send timeout (the lease's 4/5 in a
 * replica; 3 s here), its row retried with the same Idempotency-Key, and
 * meanwhile every other destination of the same event is delivered: each
 * destination has its own pipeline (src/notify/drain.ts).
 */
let t: TestDatabase;
let rig: DestinationRig | undefined;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await endDestinationTest(t.db, rig);
  await t.drop();
});

it('a webhook that never answers holds nothing but itself, and is cut and retried once with the same key', async () => {
  rig = await startDestinationRig(t.db, { timeoutMs: 3_000 });
  let answer!: () => void;
  rig.webhook.answer({ status: 200, body: 'ok', after: new Promise<void>((resolve) => (answer = resolve)) });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', destinations: JSON.stringify(rig.destinations()) });
  const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly', cron: '0 2 * * *' });
  const alert = await insertAlert(t.db, wf.id, { severity: 'critical', openedAt: T0, escalateAt: null });
  await recordEvent(t.db, rig.config, alert.id, 'opened', { now: T0, data: { severity: 'critical' } });

  const started = Date.now();
  const tick = rig.sender.tick();
  // While the webhook's request hangs, Slack, the mail and PagerDuty are delivered.
  await eventually(() => {
    expect(rig!.webhook.requests.map((r) => r.status)).toEqual([0]);
    expect(rig!.slack.roots('CACME')).toHaveLength(1);
    expect(rig!.smtp.received).toHaveLength(1);
    expect(rig!.pagerduty.requests.map((r) => r.status)).toEqual([202]);
  }, 2_500);
  await tick;
  // Cut at the timeout, not held until the receiver answers.
  expect(Date.now() - started).toBeLessThan(10_000);
  const row = await t.db.selectFrom('notifications').select(['status', 'idempotencyKey']).where('destination', 'like', 'webhook:%').executeTakeFirstOrThrow();
  expect(row.status).not.toBe('sent');
  answer();

  await rig.drain();
  const keys = rig.webhook.requests.map((r) => r.headers['idempotency-key']);
  expect(keys).toEqual([row.idempotencyKey, row.idempotencyKey]);
  expect(rig.webhook.requests.at(-1)!.status).toBe(200);
  expect(await t.db.selectFrom('notifications').select('status').where('status', '!=', 'sent').execute()).toEqual([]);
});
