import { describe, expect, it } from 'vitest';
import { replay } from '../scenarios/support.js';
import { costOf, peakPerMinute, threadsIn } from './noise-support.js';

const ACME = { id: 'acme', name: 'Acme', channel: 'CACME', oncall: { users: ['UONCALL'] } };
const base = { platformChannel: 'CPLATFORM', tenants: [ACME] };
const DAY = 86_400_000;
const between = <C extends { at: string }>(calls: C[], from: string, to: string) => calls.filter((c) => c.at >= from && c.at < to);

/**
 * Noise audit: a 5-minute job failing for three days, 864 failed ticks.
 * Budget an on-call person accepts: one thread; the escalation pages once;
 * nobody owning it, the on-call is paged again on backing-off periods (no
 * more than 8 times in the first 36 hours, at most twice in the
 * second day's first half), never left unseen for days after one missed page; an owner is
 * reminded less and less often and, not answering, the alert goes back to
 * the on-call (not reminded for two days); every failure only re-renders the
 * root (no reply), and the channel never gets more than a handful of calls
 * in a minute.
 */
describe('noise audit: a long incident', { timeout: 600_000 }, () => {
  it('a */5 job failing 36 hours unowned, then owned, then recovering after 3 days', async () => {
    const { transcript } = await replay(
      {
        ...base,
        start: '2026-03-09T23:58:00Z',
        until: '2026-03-13T00:10:00Z',
        workflows: [{ tenant: 'acme', name: 'sync', cron: '*/5 * * * *' }],
        outcomes: [{ workflow: 'sync', from: '2026-03-10T00:00:00Z', to: '2026-03-12T23:55:00Z', attempts: [{ status: 'failed', error: 'warehouse unreachable' }] }],
        actions: [{ at: '2026-03-11T12:00:00Z', user: 'UALICE', channel: 'CACME', action: 'take_ownership', workflow: 'sync' }],
      },
      { escalationIntervalSeconds: 300 },
    );
    const threads = threadsIn(transcript.calls, 'CACME');
    expect(threads).toHaveLength(1);
    const [thread] = threads;
    const cost = costOf(thread!);
    const replies = (kind: string) => thread!.replies.filter((_, i) => cost.events[i + 1] === kind);
    expect(cost.events.filter((e) => e === 'escalated')).toHaveLength(1);
    expect(cost.events.at(-1)).toBe('resolved');

    // Unowned for 36 hours: the on-call is paged again, backing off towards once a day (was: never after the escalation).
    const unowned = between(replies('reminder'), '2026-03-10', '2026-03-11T12:00');
    expect(unowned.length).toBeGreaterThanOrEqual(5);
    expect(unowned.length).toBeLessThanOrEqual(8);
    expect(between(unowned, '2026-03-11', '2026-03-11T12:00').length).toBeLessThanOrEqual(2);
    for (const r of unowned) expect(r.text).toContain('<@UONCALL>');
    // Owned: three reminders to the owner, backing off, then the ownership lapses to the on-call (one page).
    const owned = between(replies('reminder'), '2026-03-11T12:00', '2026-03-11T18:00');
    expect(owned).toHaveLength(3);
    for (const r of owned) expect(r.text).toContain('<@UALICE>');
    const gaps = owned.slice(1).map((r, i) => Date.parse(r.at) - Date.parse(owned[i]!.at));
    expect(gaps[1]!).toBeGreaterThan(gaps[0]!);
    expect(replies('ownership_expired')).toHaveLength(1);
    expect(replies('ownership_expired')[0]!.text).toContain('<@UONCALL>');
    // After the lapse the alert is the on-call's again: paged once a day at most, not forgotten for the day and more it lasts.
    const after = between(replies('reminder'), '2026-03-11T18:00', '2026-03-13');
    expect(after.length).toBeGreaterThanOrEqual(1);
    expect(after.length).toBeLessThanOrEqual(2);

    // The whole incident: 864 failures, fewer than 25 replies, and every failure only edits the root.
    expect(cost.replies).toBeLessThan(25);
    expect(cost.updates).toBeLessThanOrEqual(transcript.summary.failedTicks + cost.replies + 1);
    // chat.update is Tier 3 (~50 a minute per workspace): one incident uses a handful at most.
    expect(peakPerMinute(transcript.calls)).toBeLessThanOrEqual(6);
    expect(Date.parse(thread!.replies.at(-1)!.at) - Date.parse(thread!.root.at)).toBeGreaterThan(2.5 * DAY);
  });
});
