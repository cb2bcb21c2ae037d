import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createOutboxSender } from '../../src/notify/sender.js';
import { consoleOutboxApi } from '../../src/slack/console-sink.js';
import { METADATA_EVENT_TYPE } from '../../src/slack/ids.js';
import { slackTransport } from '../../src/slack/slack-transport.js';
import { createRootRefresher } from '../../src/slack/root-refresher.js';
import type { StoredMessage } from '../../src/slack/recording-slack-api.js';
import { ManualClock } from '../../src/clock.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { addEvent, insertAlert, startOutboxRig, type OutboxRig } from '../helpers/slack-outbox.js';

let t: TestDatabase;
let rig: OutboxRig | undefined;

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
});
afterAll(() => t.drop());
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  // Each test starts from an empty outbox.
  await t.db.deleteFrom('notifications').execute();
  await t.db.deleteFrom('alertThreads').execute();
  await t.db.deleteFrom('alertEvents').execute();
  await t.db.deleteFrom('alerts').execute();
});

const key = (m: StoredMessage) => m.metadata?.event_payload.key as string | undefined;

async function notificationRows() {
  return t.db.selectFrom('notifications').selectAll().orderBy('id').execute();
}

describe('outbox sender over Slack', () => {
  it('posts one root per channel, replies in order in its thread, every message with metadata; root updates coalesced', async () => {
    rig = await startOutboxRig(t.db);
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'quality-check' });
    const alert = await insertAlert(t.db, wf.id);
    const at = (m: number) => new Date(T0.getTime() + m * 60_000);
    await addEvent(t.db, alert.id, 'opened', { now: at(0), platformChannel: 'CPLAT' });
    await rig.drain();
    for (let i = 4; i <= 6; i++) await addEvent(t.db, alert.id, 'failure_recorded', { now: at(i), platformChannel: 'CPLAT', changes: { consecutiveFailures: i } });
    await addEvent(t.db, alert.id, 'escalated', { now: at(7), platformChannel: 'CPLAT', changes: { severity: 'critical', escalatedAt: at(7) } });
    await addEvent(t.db, alert.id, 'owner_changed', {
      now: at(8),
      platformChannel: 'CPLAT',
      actor: 'U0ALICE',
      changes: { ownerUser: 'U0ALICE', acknowledgedBy: 'U0ALICE', acknowledgedAt: at(8) },
      data: { fromTeam: 'engineering', fromUser: null, toTeam: 'engineering', toUser: 'U0ALICE' },
    });
    await rig.drain();

    for (const channel of ['CACME', 'CPLAT']) {
      const roots = rig.slack.roots(channel);
      expect(roots).toHaveLength(1);
      const replies = rig.slack.replies(channel, roots[0]!.ts);
      expect(replies.map((r) => r.metadata?.event_payload.event)).toEqual(['escalated', 'owner_changed']);
      expect(replies[1]!.text).toContain('<@U0ALICE> took ownership');
      for (const m of [roots[0]!, ...replies]) {
        expect(m.metadata).toMatchObject({ event_type: METADATA_EVENT_TYPE, event_payload: { alert_id: alert.id, tenant: 'acme', workflow: 'quality-check', key: expect.stringContaining(`slack:${channel}`) } });
      }
      // The root now reads critical and owned, re-rendered far fewer times than there were events.
      expect(roots[0]!.text).toMatch(/^Critical \(owned\)/);
      expect(roots[0]!.updates).toBeGreaterThanOrEqual(1);
      expect(roots[0]!.updates).toBeLessThanOrEqual(2);
    }
    const rows = await notificationRows();
    expect(rows.every((r) => r.status === 'sent')).toBe(true);
    expect(rows).toHaveLength(12);
  });

  it('a root posted after later events already happened shows the latest state and needs no update', async () => {
    rig = await startOutboxRig(t.db);
    const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
    await addEvent(t.db, alert.id, 'opened', { now: T0 });
    await addEvent(t.db, alert.id, 'escalated', { now: T0, changes: { severity: 'critical' } });
    await rig.drain();
    const [root] = rig.slack.roots('CACME');
    expect(root!.text).toMatch(/^Critical/);
    expect(rig.slack.replies('CACME', root!.ts)).toHaveLength(1);
    expect(rig.slack.callsTo('chat.update')).toHaveLength(0);
  });

  it('coalesces a burst of queued re-renders into one chat.update per root', async () => {
    rig = await startOutboxRig(t.db);
    const wf = await makeWorkflow(t.db, { tenantId: 'acme' });
    const alert = await insertAlert(t.db, wf.id);
    await addEvent(t.db, alert.id, 'opened', { now: T0 });
    await rig.drain();
    for (let i = 4; i < 14; i++) await addEvent(t.db, alert.id, 'failure_recorded', { now: T0, changes: { consecutiveFailures: i } });
    await rig.drain();
    const [root] = rig.slack.roots('CACME');
    expect(rig.slack.callsTo('chat.update')).toHaveLength(1);
    expect(root!.updates).toBe(1);
    expect(root!.text).toContain('13 failures');
    expect(rig.slack.callsTo('chat.postMessage')).toHaveLength(1);
  });

  it('exactly once under 429 Retry-After, 500, ratelimited, resets, slow answers and accepted-but-lost responses', async () => {
    rig = await startOutboxRig(t.db, { timeoutMs: 300 });
    const kinds = ['opened', 'escalated', 'owner_changed', 'silenced', 'resolved'] as const;
    const alerts = [];
    for (let i = 0; i < 6; i++) {
      const wf = await makeWorkflow(t.db, { tenantId: i % 2 ? 'acme' : 'globex' });
      alerts.push(await insertAlert(t.db, wf.id));
    }
    const s = rig.slack;
    s.failNext({ kind: 'lost' }, { method: 'chat.postMessage', times: 3 });
    s.failNext({ kind: 'http_429', retryAfterSeconds: 3 }, { method: 'chat.postMessage', channel: 'CACME', times: 2 });
    s.failNext({ kind: 'http_500' }, { method: 'chat.postMessage', times: 2 });
    s.failNext({ kind: 'ratelimited' }, { method: 'chat.postMessage', times: 1 });
    s.failNext({ kind: 'reset' }, { method: 'chat.postMessage', times: 2 });
    s.failNext({ kind: 'slow', delayMs: 600 }, { method: 'chat.postMessage', times: 2 });
    s.failNext({ kind: 'http_500' }, { method: 'conversations.replies', times: 1 });
    for (const [step, kind] of kinds.entries()) {
      for (const alert of alerts) {
        await addEvent(t.db, alert.id, kind, {
          now: new Date(T0.getTime() + step * 1000),
          platformChannel: 'CPLAT',
          actor: 'U0BOB',
          ...(kind === 'resolved' ? { changes: { status: 'resolved', resolvedAt: new Date(T0.getTime() + 7 * 3_600_000) } } : {}),
        });
        if (kind === 'opened') await rig.sender.tick(); // let faults land on roots as well as replies
      }
    }
    await rig.drain();
    // Slow answers arrive after the test's client gave up; let them land before counting.
    await new Promise((r) => setTimeout(r, 700));

    const rows = await notificationRows();
    expect(rows.map((r) => r.status)).toEqual(rows.map(() => 'sent'));
    const stored = s.messages();
    const keys = stored.map(key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(keys)).toEqual(new Set(rows.map((r) => r.idempotencyKey)));
    for (const alert of alerts) {
      for (const channel of ['CACME', 'CGLOBEX', 'CPLAT']) {
        const root = s.roots(channel).find((m) => m.metadata?.event_payload.alert_id === alert.id);
        if (!root) continue;
        expect(root.metadata?.event_payload.event).toBe('opened');
        expect(s.replies(channel, root.ts).map((m) => m.metadata?.event_payload.event)).toEqual(['escalated', 'owner_changed', 'silenced', 'resolved']);
        expect(root.text).toMatch(/Resolved after 7h 00m$/);
      }
    }
    expect(s.roots('CPLAT')).toHaveLength(6);
    // Every fault was actually hit, and lookups settled the unknown outcomes.
    const outcomes = s.calls.map((c) => c.outcome);
    for (const o of ['lost', 'http_429', 'http_500', 'ratelimited', 'reset', 'slow']) expect(outcomes).toContain(o);
    expect(rows.some((r) => (r.result as { recovered?: boolean }).recovered)).toBe(true);
  });

  it('a 429 holds back only its channel, for Retry-After', async () => {
    rig = await startOutboxRig(t.db);
    const a1 = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
    const a2 = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'globex' })).id);
    rig.slack.failNext({ kind: 'http_429', retryAfterSeconds: 30 }, { channel: 'CACME' });
    await addEvent(t.db, a1.id, 'opened', { now: T0 });
    await addEvent(t.db, a2.id, 'opened', { now: T0 });
    await rig.sender.tick();
    rig.clock.advance(5_000);
    while (await rig.sender.tick());
    expect(rig.slack.roots('CGLOBEX')).toHaveLength(1);
    expect(rig.slack.roots('CACME')).toHaveLength(0);
    const held = await t.db.selectFrom('notifications').selectAll().where('destination', '=', 'slack:CACME').executeTakeFirstOrThrow();
    expect(held).toMatchObject({ status: 'pending', nextAttemptAt: new Date(T0.getTime() + 30_000) });
    rig.clock.advance(25_000);
    await rig.sender.tick();
    expect(rig.slack.roots('CACME')).toHaveLength(1);
  });

  it('200 alerts opened at once in one channel go out at about one a second, none dropped or doubled', async () => {
    rig = await startOutboxRig(t.db, { server: { postMessageMinIntervalMs: 1000 } });
    const wf = [];
    for (let i = 0; i < 200; i++) wf.push(await makeWorkflow(t.db, { tenantId: 'acme', name: `storm-${String(i).padStart(3, '0')}` }));
    for (const w of wf) {
      const alert = await insertAlert(t.db, w.id);
      await addEvent(t.db, alert.id, 'opened', { now: T0 });
    }
    await rig.drain({ stepMs: 500 });
    const posts = rig.slack.callsTo('chat.postMessage');
    expect(posts.filter((c) => c.outcome !== 'ok')).toEqual([]);
    const roots = rig.slack.roots('CACME');
    expect(roots).toHaveLength(200);
    expect(new Set(roots.map(key)).size).toBe(200);
    const times = posts.map((c) => c.at.getTime());
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(1000);
    // Paced, not stalled: the storm took about 200 seconds of Slack's time.
    expect(times[times.length - 1]! - times[0]!).toBeLessThan(200 * 1500);
    expect(rig.slack.callsTo('chat.update')).toHaveLength(0);
  });

  it('a permanent error marks the row dead without blocking other channels', async () => {
    rig = await startOutboxRig(t.db);
    const a1 = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
    const a2 = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'globex' })).id);
    rig.slack.failNext({ kind: 'platform_error', error: 'channel_not_found' }, { channel: 'CACME' });
    await addEvent(t.db, a1.id, 'opened', { now: T0 });
    await addEvent(t.db, a2.id, 'opened', { now: T0 });
    await rig.drain();
    const rows = await notificationRows();
    expect(rows.find((r) => r.destination === 'slack:CACME')).toMatchObject({ status: 'dead', lastError: 'channel_not_found' });
    expect(rows.find((r) => r.destination === 'slack:CGLOBEX')).toMatchObject({ status: 'sent' });
  });

  it('transient errors back off exponentially', async () => {
    rig = await startOutboxRig(t.db);
    const a1 = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
    rig.slack.failNext({ kind: 'platform_error', error: 'internal_error' }, { times: 3 });
    await addEvent(t.db, a1.id, 'opened', { now: T0 });
    const dueTimes: number[] = [];
    for (let i = 0; i < 3; i++) {
      await rig.sender.tick();
      const row = await t.db.selectFrom('notifications').selectAll().executeTakeFirstOrThrow();
      dueTimes.push(row.nextAttemptAt.getTime() - rig.clock.now().getTime());
      rig.clock.set(row.nextAttemptAt);
    }
    expect(dueTimes).toEqual([1000, 2000, 4000]);
    await rig.sender.tick();
    expect(rig.slack.roots('CACME')).toHaveLength(1);
  });
});

describe('console sink', () => {
  it('prints roots and indented replies when there are no Slack credentials', async () => {
    const lines: string[] = [];
    const api = consoleOutboxApi((l) => lines.push(l));
    const clock = new ManualClock(T0);
    const deps = { db: t.db, clock, logger: silentLogger, replicaId: 'console', launchers: () => undefined };
    const sender = createOutboxSender(deps, [slackTransport(deps, api)]);
    const refresher = createRootRefresher(deps, api);
    const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly' })).id);
    await addEvent(t.db, alert.id, 'opened', { now: T0 });
    while (await sender.tick());
    await addEvent(t.db, alert.id, 'escalated', { now: T0, changes: { severity: 'critical' } });
    while ((await sender.tick()) || (await refresher.tick()));
    expect(lines[0]).toMatch(/^\[slack #CACME\] ● Warning \(open\): Acme \/ nightly/);
    expect(lines[1]).toMatch(/^\[slack #CACME\]   ↳ Escalated to \*critical\*/);
    expect(lines[2]).toMatch(/✎ root console\.000001 now reads: Critical/);
  });
});

describe('console sink with hostile run output', () => {
  it('shows escaped text as Slack would display it, with terminal control characters made visible', async () => {
    const lines: string[] = [];
    const api = consoleOutboxApi((l) => lines.push(l));
    await api.postMessage({
      channel: 'CACME',
      text: 'Warning: refused &lt;!channel&gt; \u001b[2J done',
      blocks: [],
      metadata: { event_type: 'scheduler_alert_event', event_payload: { key: 'k' } },
    } as unknown as Parameters<typeof api.postMessage>[0]);
    expect(lines[0]).toContain('Warning: refused <!channel> \\x1b[2J done');
    expect(lines[0]).not.toContain('\u001b');
  });
});
