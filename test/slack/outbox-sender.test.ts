import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createOutboxSender } from '../../src/notify/sender.js';
import { consoleOutboxApi } from '../../src/slack/transport/console-sink.js';
import { METADATA_EVENT_TYPE } from '../../src/slack/blocks/ids.js';
import { slackTransport } from '../../src/slack/transport/slack-transport.js';
import { createRootRefresher } from '../../src/slack/transport/root-refresher.js';
import type { StoredMessage } from '../../src/replay/recording-slack-api.js';
import { ManualClock } from '../../src/clock.js';
import type { TestDatabase } from '../helpers/db.js';
import { makeWorkflow, T0 } from '../helpers/factories.js';
import { addEvent, insertAlert, outboxTestHooks, startOutboxRig, type OutboxRig } from '../helpers/slack-outbox.js';

let t: TestDatabase;
let rig: OutboxRig | undefined;

outboxTestHooks({ database: (db) => (t = db), closeRig: async () => { await rig?.close(); rig = undefined; }, tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' }] });

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
    await s.answered();

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
        expect(root.text).toMatch(/Resolved after 7h\.$/);
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
    // 600 statements of setup: in parallel, a few at a time (one after another they took 19 s on a loaded machine).
    for (let i = 0; i < 200; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, async (_, j) => {
          const w = await makeWorkflow(t.db, { tenantId: 'acme', name: `storm-${String(i + j).padStart(3, '0')}` });
          const alert = await insertAlert(t.db, w.id);
          await addEvent(t.db, alert.id, 'opened', { now: T0 });
        }),
      );
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
    // 200 real deliveries, each about ten database round trips and an HTTP call: a minute on a machine whose 2 cores are busy.
  }, 120_000);

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

/** Waits (a bounded real-time poll) until the sender's loop is asleep on the clock or done. */
async function quiet(sender: { busy(): boolean }, done: () => boolean) {
  const deadline = Date.now() + 10_000;
  do {
    await new Promise((r) => setTimeout(r, 2));
    if (Date.now() > deadline) throw new Error('the sender loop never went quiet');
  } while (sender.busy() && !done());
}

/** Runs the sender's loop tick as the runner does, moving the manual clock to the next sleeper whenever it is quiet. */
async function runLoopTick(r: OutboxRig, sender = r.sender, stop = new AbortController()) {
  let done = false;
  const tick = sender.loop.tick(stop.signal).finally(() => (done = true));
  for (;;) {
    await quiet(sender, () => done);
    if (done) return tick;
    const wake = r.clock.nextWake();
    if (!wake) throw new Error('the sender loop is stuck: busy with nobody asleep on the clock');
    r.clock.set(wake);
  }
}

const postTimes = (r: OutboxRig, channel: string) =>
  r.slack
    .callsTo('chat.postMessage')
    .filter((c) => c.channel === channel)
    .map((c) => c.at.getTime() - T0.getTime());

describe('outbox sender loop: a pipeline per destination', () => {
  it('sends each channel\'s next message exactly one interval after the previous answer, every channel at once, no 429', async () => {
    rig = await startOutboxRig(t.db, { server: { postMessageMinIntervalMs: 1000 } });
    for (let i = 0; i < 4; i++) {
      for (const tenantId of ['acme', 'globex']) {
        const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId })).id);
        await addEvent(t.db, alert.id, 'opened', { now: T0, platformChannel: 'CPLAT' });
      }
    }
    expect(await runLoopTick(rig)).toBe(true);

    expect(rig.slack.callsTo('chat.postMessage').filter((c) => c.outcome !== 'ok')).toEqual([]);
    expect(postTimes(rig, 'CACME')).toEqual([0, 1000, 2000, 3000]);
    expect(postTimes(rig, 'CGLOBEX')).toEqual([0, 1000, 2000, 3000]);
    expect(postTimes(rig, 'CPLAT')).toEqual([0, 1000, 2000, 3000, 4000, 5000, 6000, 7000]);
    // The loop ended as soon as the last channel had nothing left, not an interval later.
    expect(rig.clock.now().getTime() - T0.getTime()).toBeLessThanOrEqual(7000 + 100);
    const rows = await notificationRows();
    expect(rows.map((r) => r.status)).toEqual(rows.map(() => 'sent'));
    expect(new Set(rig.slack.messages().map(key)).size).toBe(16);
  });

  it('two replicas share a channel\'s pace through the database: together still one message a second, each sent once', async () => {
    rig = await startOutboxRig(t.db, { server: { postMessageMinIntervalMs: 1000 } });
    const deps = { db: t.db, clock: rig.clock, logger: silentLogger, replicaId: 'second-replica', launchers: () => undefined };
    const second = createOutboxSender(deps, [slackTransport(deps, rig.api)]);
    for (let i = 0; i < 6; i++) {
      const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
      await addEvent(t.db, alert.id, 'opened', { now: T0 });
    }
    const stop = new AbortController();
    let done = 0;
    const loops = [rig.sender, second].map((s) => s.loop.tick(stop.signal).finally(() => done++));
    while (done < 2) {
      await quiet({ busy: () => rig!.sender.busy() || second.busy() }, () => done === 2);
      if (done === 2) break;
      rig.clock.set(rig.clock.nextWake()!);
    }
    await Promise.all(loops);

    expect(rig.slack.callsTo('chat.postMessage').filter((c) => c.outcome !== 'ok')).toEqual([]);
    expect(postTimes(rig, 'CACME')).toEqual([0, 1000, 2000, 3000, 4000, 5000]);
    const rows = await notificationRows();
    expect(rows.map((r) => r.status)).toEqual(rows.map(() => 'sent'));
    expect(new Set(rig.slack.roots('CACME').map(key)).size).toBe(6);
  });

  it('a 429 one replica receives holds the channel for Retry-After on every replica', async () => {
    rig = await startOutboxRig(t.db, { server: { postMessageMinIntervalMs: 1000 } });
    const deps = { db: t.db, clock: rig.clock, logger: silentLogger, replicaId: 'second-replica', launchers: () => undefined };
    const second = createOutboxSender(deps, [slackTransport(deps, rig.api)]);
    rig.slack.failNext({ kind: 'http_429', retryAfterSeconds: 3 }, { channel: 'CACME' });
    const first = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
    await addEvent(t.db, first.id, 'opened', { now: T0 });
    await rig.sender.tick();
    const other = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
    await addEvent(t.db, other.id, 'opened', { now: T0 });

    rig.clock.advance(1000);
    while (await second.tick());
    expect(rig.slack.roots('CACME')).toHaveLength(0);
    const waiting = await t.db.selectFrom('notifications').selectAll().where('alertId', '=', other.id).executeTakeFirstOrThrow();
    expect(waiting).toMatchObject({ status: 'pending', leaseOwner: null, nextAttemptAt: new Date(T0.getTime() + 3000) });

    rig.clock.set(new Date(T0.getTime() + 3000));
    while (await second.tick());
    expect(rig.slack.roots('CACME')).toHaveLength(1);
    expect(postTimes(rig, 'CACME')).toEqual([0, 3000]);
  });

  it('on shutdown a row waiting for its slot is handed back as it was, due at the slot', async () => {
    rig = await startOutboxRig(t.db, { server: { postMessageMinIntervalMs: 1000 } });
    const alerts = [];
    for (let i = 0; i < 2; i++) {
      alerts.push(await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id));
      await addEvent(t.db, alerts[i]!.id, 'opened', { now: T0 });
    }
    const stop = new AbortController();
    let done = false;
    const loop = rig.sender.loop.tick(stop.signal).finally(() => (done = true));
    await quiet(rig.sender, () => done);
    expect(rig.slack.roots('CACME')).toHaveLength(1);
    // The second root is claimed and loaded, asleep until its slot at T0 + 1 s.
    expect(await t.db.selectFrom('notifications').select(['status', 'leaseOwner']).where('alertId', '=', alerts[1]!.id).executeTakeFirstOrThrow()).toEqual({
      status: 'sending',
      leaseOwner: 'test-replica',
    });
    stop.abort();
    expect(await loop).toBe(true);
    expect(rig.clock.now()).toEqual(T0);
    expect(await t.db.selectFrom('notifications').selectAll().where('alertId', '=', alerts[1]!.id).executeTakeFirstOrThrow()).toMatchObject({
      status: 'pending',
      leaseOwner: null,
      leaseExpiresAt: null,
      attempts: 0,
      nextAttemptAt: new Date(T0.getTime() + 1000),
    });
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
    expect(lines[1]).toMatch(/^\[slack #CACME\]   ↳ Acme \/ nightly: Escalated to critical /);
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
