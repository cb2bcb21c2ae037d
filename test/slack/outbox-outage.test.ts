import { describe, expect, it } from 'vitest';
import { renderMetrics } from '../../src/http/metrics-route.js';
import { counterValue, metrics } from '../../src/metrics.js';
import type { OutageNotice } from '../../src/notify/sender.js';
import { platformOutageNotice } from '../../src/slack/transport/outage-notice.js';
import type { StoredMessage } from '../../src/replay/recording-slack-api.js';
import type { TestDatabase } from '../helpers/db.js';
import { makeWorkflow, T0 } from '../helpers/factories.js';
import { addEvent, insertAlert, outboxTestHooks, startOutboxRig, type OutboxRig } from '../helpers/slack-outbox.js';

let t: TestDatabase;
let rig: OutboxRig | undefined;

outboxTestHooks({ database: (db) => (t = db), closeRig: async () => { await rig?.close(); rig = undefined; } });

const HOUR = 3_600_000;
const at = (ms: number) => new Date(T0.getTime() + ms);
const key = (m: StoredMessage) => m.metadata?.event_payload.key as string | undefined;

describe('a destination that keeps failing', () => {
  it('Slack answers 500 for two hours, then recovers: every notification delivered once, in order, none dead', async () => {
    const notices: OutageNotice[] = [];
    const noticesBefore = await counterValue(metrics.deliveries, { kind: 'slack', result: 'outage_notice' });
    rig = await startOutboxRig(t.db, { sender: { onOutage: async (n) => void notices.push(n) } });
    const r = rig;
    const alerts = [];
    for (let i = 0; i < 3; i++) alerts.push(await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id));
    // Every call Slack gets, posts and the lookups that settle their unknown outcomes alike.
    r.slack.failNext({ kind: 'http_500' }, { times: 1_000_000 });
    // Events keep arriving during the outage: some before, some in the middle of it.
    const schedule: [number, number, 'opened' | 'escalated' | 'resolved'][] = [
      [0, 0, 'opened'],
      [0, 1, 'opened'],
      [10 * 60_000, 0, 'escalated'],
      [45 * 60_000, 2, 'opened'],
      [90 * 60_000, 1, 'resolved'],
      [110 * 60_000, 2, 'escalated'],
    ];
    let next = 0;
    const seen = new Set<string>();
    while (r.clock.now() < at(2 * HOUR)) {
      while (next < schedule.length && at(schedule[next]![0]) <= r.clock.now()) {
        const [, i, kind] = schedule[next++]!;
        await addEvent(t.db, alerts[i]!.id, kind, { now: r.clock.now(), ...(kind === 'resolved' ? { changes: { status: 'resolved', resolvedAt: r.clock.now() } } : {}) });
      }
      await r.sender.tick();
      await r.refresher.tick();
      const rows = await t.db.selectFrom('notifications').select(['status', 'nextAttemptAt']).execute();
      for (const row of rows) seen.add(row.status);
      // Straight to the next thing that can happen: a retry falling due, an event, the end of the outage.
      const candidates = [...rows.map((row) => row.nextAttemptAt.getTime()), at(schedule[next]?.[0] ?? 2 * HOUR).getTime(), at(2 * HOUR).getTime()];
      const now = r.clock.now().getTime();
      r.clock.set(new Date(Math.max(now + 1000, Math.min(...candidates.filter((c) => c > now)))));
    }
    expect(seen.has('dead')).toBe(false);
    expect(r.slack.messages()).toEqual([]);
    // Retried all along, never further apart than the 10-minute cap (plus one step of this loop).
    const attempts = r.slack.calls.filter((c) => c.outcome === 'http_500').map((c) => c.at.getTime());
    expect(attempts.length).toBeGreaterThan(12);
    for (let i = 1; i < attempts.length; i++) expect(attempts[i]! - attempts[i - 1]!).toBeLessThanOrEqual(10 * 60_000 + 1000);
    expect(attempts[attempts.length - 1]!).toBeGreaterThan(at(2 * HOUR - 11 * 60_000).getTime());
    // One notice, once the outage had lasted the threshold (15 minutes by default).
    expect(notices.map((n) => [n.kind, n.destination])).toEqual([['outage', 'slack:CACME']]);
    expect(notices[0]!.now.getTime() - T0.getTime()).toBeGreaterThanOrEqual(15 * 60_000);
    expect(notices[0]!.now.getTime() - T0.getTime()).toBeLessThan(30 * 60_000);

    // Visible in /metrics meanwhile, by kind only (no destination names there).
    const scraped = await renderMetrics({ db: t.db, clock: r.clock });
    expect(scraped).toContain('scheduler_destinations_failing{kind="slack"} 1');
    expect(scraped).toMatch(/scheduler_destination_outage_seconds\{kind="slack"\} 7\d{3}/);
    expect(await counterValue(metrics.deliveries, { kind: 'slack', result: 'outage_notice' })).toBe(noticesBefore + 1);

    r.slack.clearFaults();
    // Slack is back; the held destination's next retry (at most ten minutes away) finds out.
    const held = await t.db.selectFrom('destinationOutages').selectAll().executeTakeFirstOrThrow();
    expect(held.heldUntil.getTime() - r.clock.now().getTime()).toBeLessThanOrEqual(10 * 60_000);
    r.clock.set(held.heldUntil);
    await r.drain();

    const rows = await t.db.selectFrom('notifications').selectAll().orderBy('id').execute();
    expect(rows).toHaveLength(schedule.length);
    expect(rows.map((row) => row.status)).toEqual(rows.map(() => 'sent'));
    // Once each, and in the order they were written.
    expect(r.slack.messages().map(key)).toEqual(rows.map((row) => row.idempotencyKey));
    expect(notices.map((n) => n.kind)).toEqual(['outage', 'recovered']);
    expect(await t.db.selectFrom('destinationOutages').selectAll().execute()).toEqual([]);
  }, 120_000);

  it('a permanent answer still makes the row dead at once, and holds nothing', async () => {
    rig = await startOutboxRig(t.db);
    const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
    rig.slack.failNext({ kind: 'platform_error', error: 'channel_not_found' }, { method: 'chat.postMessage' });
    await addEvent(t.db, alert.id, 'opened', { now: T0 });
    await rig.sender.tick();
    const row = await t.db.selectFrom('notifications').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'dead', lastError: 'channel_not_found', attempts: 1 });
    expect(await t.db.selectFrom('destinationOutages').selectAll().execute()).toEqual([]);
  });

  it('the notice goes to the platform channel, unless the platform channel is the one failing', async () => {
    rig = await startOutboxRig(t.db);
    const post = platformOutageNotice(rig.api, 'CPLAT')!;
    const outage = { failingSince: T0, failures: 9, heldUntil: at(HOUR), lastError: 'HTTP 500 <!channel>', noticedAt: at(HOUR), cause: 'unreachable' as const };
    await post({ kind: 'outage', destination: 'slack:CACME', outage, now: at(20 * 60_000) });
    await post({ kind: 'outage', destination: 'slack:CPLAT', outage, now: at(20 * 60_000) });
    const posted = rig.slack.messages('CPLAT');
    expect(posted).toHaveLength(1);
    expect(posted[0]!.text).toBe('Deliveries to slack:CACME have been failing for 20m (9 attempts, last error: HTTP 500 &lt;!channel&gt;). Its notifications are held and will go out in order when it recovers.');
    // A webhook's id is its URL, which may carry a token: only the host is shown.
    await post({ kind: 'recovered', destination: 'webhook:https://hooks.example.com/T0/secret-token', outage, now: at(HOUR) });
    expect(rig.slack.messages('CPLAT')[1]!.text).toBe('Deliveries to webhook:hooks.example.com recovered after 1h; the notifications held meanwhile are going out in order.');
    // An outage ended by a permanent answer: not called a recovery.
    await post({ kind: 'refused', destination: 'webhook:hooks.example.com/3f9c2a7e51d08b64', outage: { ...outage, lastError: 'HTTP 410: gone' }, now: at(HOUR) });
    expect(rig.slack.messages('CPLAT')[2]!.text).toBe(
      'Deliveries to webhook:hooks.example.com/3f9c2a7e51d08b64 are no longer failing after 1h, but not recovered: it answered, and refused for good (HTTP 410: gone). That notification is dead; the ones held meanwhile are tried now and go dead too if it keeps refusing (see the App Home).',
    );
    expect(platformOutageNotice(rig.api, undefined)).toBeUndefined();
  });
});
