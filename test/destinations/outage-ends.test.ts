import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { renderMetrics } from '../../src/http/metrics-route.js';
import type { OutageNotice } from '../../src/notify/sender-context.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { insertAlert } from '../helpers/slack-outbox.js';
import { recordEvent, startDestinationRig, endDestinationTest, type DestinationRig } from './rig.js';

/** An outage (5xx, timeouts) that ends not in a delivery but in a permanent answer (404, 410). */

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

async function setup(notices: OutageNotice[]) {
  rig = await startDestinationRig(t.db, { sender: { onOutage: async (n) => void notices.push(n), noticeAfterMs: 60_000 } });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: null, destinations: JSON.stringify(rig.destinations().filter((d) => d.kind === 'webhook')) });
  const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *' });
  const alert = await insertAlert(t.db, wf.id, { severity: 'critical', openedAt: at(0), escalateAt: null });
  return { rig, alert };
}

/** Ticks the sender, moving the clock to the end of each hold, until `done`. */
async function tickUntil(r: DestinationRig, done: () => boolean, max = 30) {
  for (let i = 0; i < max && !done(); i++) {
    await r.sender.tick();
    const outage = await t.db.selectFrom('destinationOutages').selectAll().executeTakeFirst();
    if (outage && outage.heldUntil > r.clock.now()) r.clock.set(outage.heldUntil);
  }
}

const failingGauge = async (r: DestinationRig) => (await renderMetrics({ db: t.db, clock: r.clock })).split('\n').find((l) => l.startsWith('scheduler_destinations_failing{kind="webhook"}'));

describe('an outage that ends in a permanent answer', () => {
  it('noticed, then 410: the row goes dead, the outage ends with an honest notice (not "recovered"), and a later outage starts afresh with its own notice', async () => {
    const notices: OutageNotice[] = [];
    const { rig, alert } = await setup(notices);
    rig.webhook.answer(...Array.from({ length: 12 }, () => ({ status: 500, body: 'upstream down' })));
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    await tickUntil(rig, () => notices.length > 0);
    expect(notices.map((n) => n.kind)).toEqual(['outage']);
    expect(await failingGauge(rig)).toBe('scheduler_destinations_failing{kind="webhook"} 1');

    // The receiver is back, and says this hook is gone.
    rig.webhook.reset();
    rig.webhook.answer({ status: 410, body: 'hook deleted' });
    await tickUntil(rig, () => rig.webhook.requests.length > 0);
    expect(await t.db.selectFrom('notifications').select(['status', 'lastError']).executeTakeFirstOrThrow()).toEqual({ status: 'dead', lastError: 'HTTP 410: hook deleted' });
    expect(await t.db.selectFrom('destinationOutages').selectAll().execute()).toEqual([]);
    expect(await failingGauge(rig)).toBeUndefined();
    expect(notices.map((n) => n.kind)).toEqual(['outage', 'refused']);
    expect(notices[1]!.outage.lastError).toBe('HTTP 410: hook deleted');

    // Later, a real outage: back-off from the start (1 s), and its own notice once it lasts the threshold.
    rig.clock.advance(60 * 60_000);
    rig.webhook.answer(...Array.from({ length: 12 }, () => ({ status: 503, body: 'maintenance' })));
    await recordEvent(t.db, rig.config, alert.id, 'resolved', { now: rig.clock.now(), changes: { status: 'resolved', resolvedAt: rig.clock.now() } });
    const before = rig.clock.now().getTime();
    await rig.sender.tick();
    const fresh = await t.db.selectFrom('destinationOutages').selectAll().executeTakeFirstOrThrow();
    expect(fresh).toMatchObject({ failures: 1, noticedAt: null });
    expect(fresh.heldUntil.getTime() - before).toBe(1000);
    await tickUntil(rig, () => notices.length > 2);
    expect(notices.map((n) => n.kind)).toEqual(['outage', 'refused', 'outage']);
  });

  it('not yet noticed, then 404: the outage ends without an end notice (nobody was told it began); the refusal itself is told once, as a refusal', async () => {
    const notices: OutageNotice[] = [];
    const { rig, alert } = await setup(notices);
    rig.webhook.answer({ status: 500, body: 'oops' }, { status: 404, body: 'no such hook' });
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    await tickUntil(rig, () => rig.webhook.requests.length >= 2);
    expect(rig.webhook.requests.map((r) => r.status)).toEqual([500, 404]);
    expect(await t.db.selectFrom('notifications').select('status').executeTakeFirstOrThrow()).toEqual({ status: 'dead' });
    expect(await t.db.selectFrom('destinationOutages').selectAll().execute()).toEqual([]);
    expect(notices.map((n) => [n.kind, n.outage.lastError, n.outage.failures])).toEqual([['dead', expect.stringContaining('404'), 1]]);
  });
});
