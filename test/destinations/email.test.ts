import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { counterValue, metrics } from '../../src/metrics.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { insertAlert } from '../helpers/slack-outbox.js';
import { recordEvent, startDestinationRig, endDestinationTest, type DestinationRig } from './rig.js';

let t: TestDatabase;
let rig: DestinationRig | undefined;
const at = (m: number) => new Date(T0.getTime() + m * 60_000);
const EMAIL = 'email:oncall@acme.example.com';

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.drop());
afterEach(async () => {
  await endDestinationTest(t.db, rig);
  rig = undefined;
});

async function setup(options: { minSeverity?: 'warning' | 'critical'; name?: string; lastError?: string; rig?: Parameters<typeof startDestinationRig>[1] } = {}) {
  rig = await startDestinationRig(t.db, options.rig);
  const destinations = [{ kind: 'email', to: ['oncall@acme.example.com'], ...(options.minSeverity ? { minSeverity: options.minSeverity } : {}) }];
  await makeTenant(t.db, { id: 'acme', name: 'Acme <Corp>', channel: null, destinations: JSON.stringify(destinations) });
  const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: options.name ?? 'quality-check' });
  const alert = await insertAlert(t.db, wf.id, { lastError: options.lastError ?? 'connection refused', openedAt: at(0), errorGroupFirstAt: at(-10), errorGroupLastAt: at(0) });
  return { rig, alert };
}

describe('email destination', () => {
  it('one thread per alert: the opening carries the Message-ID, every later event refers to it, subject stays; text and HTML carry the facts', async () => {
    const { rig, alert } = await setup({ lastError: '<script>alert(1)</script> & "quotes"' });
    const config = rig.config;
    await recordEvent(t.db, config, alert.id, 'opened', { now: at(0), data: { severity: 'warning' } });
    // Each message renders the alert as it is when it goes out, so send the opening first.
    await rig.drain();
    await recordEvent(t.db, config, alert.id, 'failure_recorded', { now: at(5), changes: { consecutiveFailures: 4 } });
    await recordEvent(t.db, config, alert.id, 'escalated', { now: at(15), changes: { severity: 'critical', escalatedAt: at(15) }, data: { from: 'warning', to: 'critical', reason: 'kept_failing' } });
    await recordEvent(t.db, config, alert.id, 'resolved', { now: at(60), changes: { status: 'resolved', resolvedAt: at(60) }, data: { runId: 42 } });
    await rig.drain();

    const mails = rig.smtp.received;
    // The quiet failure count is Slack's business only.
    expect(mails.map((m) => m.headers.get('x-scheduler-event'))).toEqual(['opened', 'escalated', 'resolved']);
    const [root, ...replies] = mails as [(typeof mails)[0], ...typeof mails];
    const rootId = root.headers.get('message-id')!;
    expect(rootId).toMatch(/^<[0-9a-f]{40}@scheduler\.example\.com>$/);
    expect(root.headers.has('in-reply-to')).toBe(false);
    expect(root.headers.get('subject')).toBe('[Warning] Acme <Corp> / quality-check (alert #' + alert.id + ')');
    for (const r of replies) {
      expect(r.headers.get('in-reply-to')).toBe(rootId);
      expect(r.headers.get('references')).toBe(rootId);
      expect(r.headers.get('subject')).toBe(`Re: ${root.headers.get('subject')}`);
      expect(r.headers.get('message-id')).not.toBe(rootId);
    }
    const rows = await t.db.selectFrom('notifications').selectAll().where('destination', '=', EMAIL).orderBy('id').execute();
    expect(mails.map((m) => m.headers.get('x-scheduler-idempotency-key'))).toEqual(rows.map((r) => r.idempotencyKey));
    expect(new Set(mails.map((m) => m.headers.get('message-id'))).size).toBe(3);
    expect(root.envelopeTo).toEqual(['oncall@acme.example.com']);
    expect(root.headers.get('from')).toContain('alerts@scheduler.example.com');

    // Same facts as the Slack root, in both bodies; untrusted text escaped in HTML.
    expect(root.text).toContain('Warning (open): Acme <Corp> / quality-check, 3 failures');
    expect(root.text).toContain('Alert opened: quality-check has 3 consecutive failures.');
    expect(root.text).toContain('Consecutive failures: 3');
    // The error group with how long it has been the one failing it (core idea 9), as the Slack root shows it.
    expect(root.text).toMatch(/Error group: g1 \(\d+×, first 2026-\d\d-\d\d \d\d:\d\d UTC, latest 2026-\d\d-\d\d \d\d:\d\d UTC\)/);
    expect(root.text).toContain('<script>alert(1)</script> & "quotes"');
    expect(root.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;');
    expect(root.html).not.toContain('<script>');
    expect(root.html).toContain('Acme &lt;Corp&gt;');
    expect(replies[0]!.text).toContain('Escalated to critical after 4 consecutive failures. Nobody has taken ownership.');
    expect(replies[1]!.text).toContain('Recovered: run #42 succeeded. Resolved after 1h.');
    expect(replies[1]!.text.match(/Resolved after/g)).toHaveLength(1);
    expect(replies[1]!.html).toContain('Resolved: Acme &lt;Corp&gt; / quality-check');
  });

  it('a critical-only destination hears a warning first at its escalation, which starts its thread; then the resolve', async () => {
    const { rig, alert } = await setup({ minSeverity: 'critical' });
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    await recordEvent(t.db, rig.config, alert.id, 'owner_changed', { now: at(3), actor: 'U0BOB', changes: { ownerTeam: 'customer' }, data: { fromTeam: 'engineering', toTeam: 'customer', acknowledged: false } });
    expect(await t.db.selectFrom('notifications').selectAll().execute()).toEqual([]);
    await recordEvent(t.db, rig.config, alert.id, 'escalated', { now: at(15), changes: { severity: 'critical', escalatedAt: at(15) }, data: { reason: 'deadline' } });
    await recordEvent(t.db, rig.config, alert.id, 'resolved', { now: at(30), changes: { status: 'resolved', resolvedAt: at(30) } });
    await rig.drain();
    const [first, second] = rig.smtp.received;
    expect(rig.smtp.received).toHaveLength(2);
    expect(first!.headers.get('x-scheduler-event')).toBe('escalated');
    expect(first!.headers.has('in-reply-to')).toBe(false);
    expect(first!.headers.get('subject')).toMatch(/^\[Critical\] /);
    expect(second!.headers.get('in-reply-to')).toBe(first!.headers.get('message-id'));
  });

  it('connection dropped after DATA: resent with the same Message-ID and key, so the mailbox holds one copy; nothing lost', async () => {
    const { rig, alert } = await setup();
    rig.smtp.dropAfterData(1);
    const before = await counterValue(metrics.deliveries, { kind: 'email', result: 'unknown' });
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    await recordEvent(t.db, rig.config, alert.id, 'resolved', { now: at(10), changes: { status: 'resolved', resolvedAt: at(10) } });
    await rig.drain();

    expect(await counterValue(metrics.deliveries, { kind: 'email', result: 'unknown' })).toBe(before + 1);
    const received = rig.smtp.received;
    expect(received.map((m) => [m.headers.get('x-scheduler-event'), m.acknowledged])).toEqual([
      ['opened', false],
      ['opened', true],
      ['resolved', true],
    ]);
    expect(received[1]!.headers.get('message-id')).toBe(received[0]!.headers.get('message-id'));
    expect(received[1]!.headers.get('x-scheduler-idempotency-key')).toBe(received[0]!.headers.get('x-scheduler-idempotency-key'));
    const mailbox = rig.smtp.mailbox();
    expect(mailbox.map((m) => m.headers.get('x-scheduler-event'))).toEqual(['opened', 'resolved']);
    expect(new Set(mailbox.map((m) => m.headers.get('x-scheduler-idempotency-key'))).size).toBe(2);
    // Order held: the resolve waited for the opening it replies to.
    expect(mailbox[1]!.headers.get('in-reply-to')).toBe(mailbox[0]!.headers.get('message-id'));
    const rows = await t.db.selectFrom('notifications').select(['status', 'attempts']).orderBy('id').execute();
    expect(rows).toEqual([
      { status: 'sent', attempts: 1 },
      { status: 'sent', attempts: 0 },
    ]);
  });

  it('a server slower than the lease: the conversation is cut off before the lease ends (no second sender alongside), then sent once', async () => {
    // Socket timeouts far longer than the lease: they measure a pause, not the whole send.
    const { rig, alert } = await setup({ rig: { sender: { leaseMs: 10_000 }, timeoutMs: 60_000 } });
    rig.smtp.holdRecipient(1);
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    const claimedAt = rig.clock.now().getTime();
    const sending = rig.sender.tick();
    await vi.waitFor(() => expect(rig.smtp.heldRecipients).toBe(1));
    // Four fifths of the lease: the send is cut off while the row is still this sender's.
    rig.clock.advance(8_000);
    await sending;
    const row = await t.db.selectFrom('notifications').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'sending', leaseOwner: null, lastError: expect.stringMatching(/cut off/) });
    expect(rig.clock.now().getTime()).toBeLessThan(claimedAt + 10_000);
    expect(rig.smtp.received).toHaveLength(0);

    await rig.drain();
    expect(rig.smtp.received.map((m) => [m.headers.get('x-scheduler-event'), m.acknowledged])).toEqual([['opened', true]]);
  });

  it('a 4xx reply is retried, a 5xx reply goes dead with the server’s words', async () => {
    const { rig, alert } = await setup();
    rig.smtp.rejectWith(451);
    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: at(0) });
    await rig.drain();
    expect(rig.smtp.mailbox()).toHaveLength(1);
    rig.smtp.rejectWith(550);
    await recordEvent(t.db, rig.config, alert.id, 'resolved', { now: at(10), changes: { status: 'resolved', resolvedAt: at(10) } });
    await rig.drain();
    const dead = await t.db.selectFrom('notifications').selectAll().where('status', '=', 'dead').execute();
    expect(dead).toHaveLength(1);
    expect(dead[0]!.lastError).toMatch(/550/);
  });
});
