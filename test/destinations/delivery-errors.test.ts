import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { OutageNotice } from '../../src/notify/sender-context.js';
import { rememberStoredSecrets } from '../../src/services/stored-secrets.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { insertAlert } from '../helpers/slack-outbox.js';
import { recordEvent, ROUTING_KEY, startDestinationRig, WEBHOOK_SECRET, endDestinationTest, type DestinationRig } from './rig.js';

/** What a receiver answers ends up in stored error texts: the outbox rows, destination outages, the notices. */

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

async function setup(kind: 'webhook' | 'pagerduty', sender: { onOutage?: (n: OutageNotice) => Promise<void>; noticeAfterMs?: number } = {}) {
  rig = await startDestinationRig(t.db, { sender });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: null, destinations: JSON.stringify(rig.destinations().filter((d) => d.kind === kind)) });
  // What every replica does at start (and on every stored secret): the redactor learns the destinations' secrets.
  await rememberStoredSecrets(t.db);
  const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *' });
  const alert = await insertAlert(t.db, wf.id, { severity: 'critical', openedAt: at(0), escalateAt: null });
  return { rig, alert };
}

describe('a receiver whose answer echoes the destination’s secret', () => {
  it('webhook 400 echoing the signing secret: the dead row’s error keeps the status and the words, never the secret', async () => {
    const { rig, alert } = await setup('webhook');
    rig.webhook.answer({ status: 400, body: `{"error":"bad signature","expectedSecret":"${WEBHOOK_SECRET}"}` });
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    await rig.drain();
    const row = await t.db.selectFrom('notifications').selectAll().executeTakeFirstOrThrow();
    expect(row.status).toBe('dead');
    expect(row.lastError).toContain('HTTP 400');
    expect(row.lastError).toContain('bad signature');
    expect(row.lastError).not.toContain(WEBHOOK_SECRET);
  });

  it('webhook 500s echoing the secret for longer than the notice threshold: the outage, its notice and the held row never hold it', async () => {
    const notices: OutageNotice[] = [];
    const { rig, alert } = await setup('webhook', { onOutage: async (n) => void notices.push(n), noticeAfterMs: 60_000 });
    rig.webhook.answer(...Array.from({ length: 12 }, () => ({ status: 500, body: `proxy error: upstream refused secret ${WEBHOOK_SECRET}` })));
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    const seenErrors: string[] = [];
    for (let i = 0; i < 12 && notices.length === 0; i++) {
      await rig.sender.tick();
      const outage = await t.db.selectFrom('destinationOutages').selectAll().executeTakeFirst();
      const row = await t.db.selectFrom('notifications').selectAll().executeTakeFirstOrThrow();
      if (outage) {
        seenErrors.push(outage.lastError);
        rig.clock.set(outage.heldUntil);
      }
      if (row.lastError) seenErrors.push(row.lastError);
    }
    expect(notices.map((n) => n.kind)).toEqual(['outage']);
    seenErrors.push(notices[0]!.outage.lastError);
    expect(seenErrors.length).toBeGreaterThan(2);
    for (const e of seenErrors) {
      expect(e).toContain('HTTP 500');
      expect(e).not.toContain(WEBHOOK_SECRET);
    }
  });

  it('the secret where the kept start of the answer ends: no piece of it is kept either', async () => {
    const { rig, alert } = await setup('webhook');
    // The stored error keeps the first 300 characters of the answer: the secret starts 10 before that.
    rig.webhook.answer({ status: 400, body: `${'x'.repeat(290)}${WEBHOOK_SECRET} is not the secret` });
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    await rig.drain();
    const row = await t.db.selectFrom('notifications').selectAll().executeTakeFirstOrThrow();
    expect(row.status).toBe('dead');
    expect(row.lastError).toMatch(/^HTTP 400: x{290}/);
    expect(row.lastError).not.toContain(WEBHOOK_SECRET.slice(0, 8));
  });

  it('PagerDuty 400 echoing the routing key: the dead row’s error does not hold the key', async () => {
    const { rig, alert } = await setup('pagerduty');
    rig.pagerduty.answer({ status: 400, body: `{"status":"invalid event","message":"Event object is invalid","errors":["routing_key ${ROUTING_KEY} unknown"]}` });
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    await rig.drain();
    const row = await t.db.selectFrom('notifications').selectAll().executeTakeFirstOrThrow();
    expect(row.status).toBe('dead');
    expect(row.lastError).toContain('Event object is invalid');
    expect(row.lastError).not.toContain(ROUTING_KEY);
  });
});

describe('a receiver whose answer has no end', () => {
  it('webhook 200 followed by a body that never ends: recorded sent on the status, without reading the body to its end', async () => {
    rig = await startDestinationRig(t.db, { timeoutMs: 10 * 60_000 });
    await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: null, destinations: JSON.stringify(rig.destinations().filter((d) => d.kind === 'webhook')) });
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *' });
    const alert = await insertAlert(t.db, wf.id, { severity: 'critical', openedAt: at(0), escalateAt: null });
    rig.webhook.answer({ status: 200, body: 'ok', endless: true });
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    await rig.drain();
    expect(await t.db.selectFrom('notifications').select(['status', 'attempts']).executeTakeFirstOrThrow()).toEqual({ status: 'sent', attempts: 0 });
  });

  it('webhook 500 followed by a body that never ends: held for the outage with the start of the answer as its error', async () => {
    rig = await startDestinationRig(t.db, { timeoutMs: 10 * 60_000 });
    await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: null, destinations: JSON.stringify(rig.destinations().filter((d) => d.kind === 'webhook')) });
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *' });
    const alert = await insertAlert(t.db, wf.id, { severity: 'critical', openedAt: at(0), escalateAt: null });
    rig.webhook.answer({ status: 500, body: 'e', endless: true });
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    expect(await rig.sender.tick()).toBe(true);
    const held = await t.db.selectFrom('notifications').select(['status', 'attempts', 'lastError']).executeTakeFirstOrThrow();
    expect(held).toMatchObject({ status: 'pending', attempts: 1 });
    expect(held.lastError).toMatch(/^HTTP 500: e{300}$/);
    await rig.drain();
    expect(await t.db.selectFrom('notifications').select(['status', 'attempts']).executeTakeFirstOrThrow()).toEqual({ status: 'sent', attempts: 1 });
    expect(rig.webhook.requests.map((r) => r.status)).toEqual([500, 200]);
  });
});
