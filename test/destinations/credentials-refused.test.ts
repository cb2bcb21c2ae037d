import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { OutageNotice } from '../../src/notify/sender-context.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { insertAlert } from '../helpers/slack-outbox.js';
import { recordEvent, startDestinationRig, endDestinationTest, type DestinationRig } from './rig.js';

/**
 * A webhook or PagerDuty answering 401/403 refuses the bot's credentials (a
 * secret rotated on the receiver's side, a routing key disabled): that
 * destination is held, its rows wait in order, none dead, told at once, and
 * its head row is tried again at the credential back-off until accepted.
 */

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

describe.each([
  ['webhook', 401],
  ['pagerduty', 403],
] as const)('a %s answering %i', (kind, status) => {
  it('holds that destination (not dead), tells it once, and delivers every held row once, in order, when accepted again', async () => {
    const notices: OutageNotice[] = [];
    rig = await startDestinationRig(t.db, { sender: { onOutage: async (n) => void notices.push(n) } });
    const receiver = kind === 'webhook' ? rig.webhook : rig.pagerduty;
    await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: null, destinations: JSON.stringify(rig.destinations().filter((d) => d.kind === kind)) });
    const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *' })).id, { severity: 'critical', openedAt: at(0), escalateAt: null });
    receiver.answer(...Array.from({ length: 4 }, () => ({ status, body: '{"message":"unauthorized"}' })));
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    await rig.sender.tick();
    await recordEvent(t.db, rig.config, alert.id, 'resolved', { now: at(1), changes: { status: 'resolved', resolvedAt: at(1) } });
    const held = await t.db.selectFrom('notifications').selectAll().orderBy('id').execute();
    expect(held.map((n) => n.status)).toEqual(['pending', 'pending']);
    const [outage] = await t.db.selectFrom('destinationOutages').selectAll().execute();
    expect(outage).toMatchObject({ destination: held[0]!.destination, cause: 'credentials' });
    expect(notices.map((n) => n.kind)).toEqual(['outage']);
    // Tried again at the credential back-off (15 s, doubling), one request each: 3 more refusals, then accepted.
    await rig.drain();
    const sent = await t.db.selectFrom('notifications').selectAll().orderBy('id').execute();
    // PagerDuty's trigger for an alert resolved meanwhile is not sent at all (skipped), and ends no outage.
    expect(sent.map((n) => n.status)).toEqual(kind === 'webhook' ? ['sent', 'sent'] : ['skipped', 'sent']);
    expect(receiver.requests.map((r) => r.status).slice(0, 4)).toEqual([status, status, status, status]);
    expect(receiver.requests).toHaveLength(kind === 'webhook' ? 6 : 5);
    // The opening first, then the resolution: in the order written. PagerDuty pages nobody for an alert
    // that resolved while it was held (its trigger settled as skipped), and hears the resolve.
    expect(receiver.accepted().map((r) => (JSON.parse(r.body) as { event?: string; event_action?: string }).event ?? (JSON.parse(r.body) as { event_action?: string }).event_action)).toEqual(
      kind === 'webhook' ? ['opened', 'resolved'] : ['resolve'],
    );
    expect(notices.map((n) => n.kind)).toEqual(['outage', 'recovered']);
    expect(await t.db.selectFrom('destinationOutages').selectAll().execute()).toEqual([]);
  });
});
