import { describe, expect, it } from 'vitest';
import { replay } from '../scenarios/support.js';
import { costOf, threadsIn } from './noise-support.js';

const base = { platformChannel: 'CPLATFORM', tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME', oncall: { users: ['UONCALL'] } }] };

/**
 * Noise audit: a nightly job failing a week. Budget: one thread across the
 * nights; the opening pages the on-call; nobody taking it, they are paged
 * again once a day (a reply per night at most, was none: six silent nights
 * after one page); the recovery is told once.
 */
describe('noise audit: a nightly job failing a week', { timeout: 600_000 }, () => {
  it('0 2 * * * failing 7 nights in a row, then succeeding', async () => {
    const { transcript } = await replay(
      {
        ...base,
        start: '2026-03-10T01:55:00Z',
        until: '2026-03-17T03:00:00Z',
        workflows: [{ tenant: 'acme', name: 'nightly', cron: '0 2 * * *', timezone: 'UTC' }],
        outcomes: [{ workflow: 'nightly', from: '2026-03-10T02:00:00Z', to: '2026-03-16T02:00:00Z', attempts: [{ status: 'failed', error: 'export failed' }] }],
      },
      { escalationIntervalSeconds: 3600 },
    );
    const threads = threadsIn(transcript.calls, 'CACME');
    expect(threads).toHaveLength(1);
    const cost = costOf(threads[0]!);
    expect(cost.events[0]).toBe('opened');
    expect(cost.events.at(-1)).toBe('resolved');
    const reminders = threads[0]!.replies.filter((_, i) => cost.events[i + 1] === 'reminder');
    expect(reminders.length).toBeGreaterThanOrEqual(5);
    expect(reminders.length).toBeLessThanOrEqual(7);
    const days = reminders.map((r) => r.at.slice(0, 10));
    expect(new Set(days).size).toBe(days.length);
    for (const r of reminders) expect(r.text).toContain('<@UONCALL>');
    expect(cost.replies).toBeLessThanOrEqual(9);
  });
});
