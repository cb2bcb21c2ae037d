import { describe, expect, it } from 'vitest';
import type { ScenarioInput } from '../../src/replay/scenario.js';
import { replay } from '../scenarios/support.js';
import { costOf, peakPerMinute, threadsIn, timeline } from './noise-support.js';

const base = { platformChannel: 'CPLATFORM', tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME', oncall: { users: ['UONCALL'] } }] };
const N = 30;
const names = Array.from({ length: N }, (_, i) => `job-${String(i).padStart(2, '0')}`);

/**
 * Noise audit: 30 workflows of one channel failing at once, twice in an
 * hour, then recovering one by one. Budget: one storm message per burst (no
 * root per alert); the 30 escalations at one deadline page the on-call once
 * (was: 30 broadcast replies in one minute); members recovering only edit the
 * storm message, until the storm ends and the few still open get their own
 * thread; the channel never gets more than a handful of posts in a minute.
 */
describe('noise audit: storms', { timeout: 600_000 }, () => {
  it('30 workflows failing at once twice in an hour, then recovering one by one', async () => {
    const outcomes: NonNullable<ScenarioInput['outcomes']> = names.flatMap((name, i) => [
      { workflow: name, from: '2026-03-10T00:00:00Z', to: '2026-03-10T00:15:00Z', attempts: [{ status: 'failed' as const, error: 'warehouse unreachable' }] },
      { workflow: name, from: '2026-03-10T00:35:00Z', to: new Date(Date.parse('2026-03-10T01:00:00Z') + i * 5 * 60_000).toISOString(), attempts: [{ status: 'failed' as const, error: 'warehouse unreachable' }] },
    ]);
    const { transcript } = await replay({
      ...base,
      start: '2026-03-09T23:58:00Z',
      until: '2026-03-10T03:40:00Z',
      workflows: names.map((name) => ({ tenant: 'acme', name, cron: '*/5 * * * *' })),
      outcomes,
    });
    const calls = transcript.calls.filter((c) => c.channel === 'CACME');
    const threads = threadsIn(transcript.calls, 'CACME');
    const told = threads.map((t) => `${t.workflow}: ${timeline(t).join(' | ')}`).join('\n');
    const storms = threads.filter((t) => t.events[0] === 'storm');
    expect(storms, told).toHaveLength(2);
    for (const s of storms) expect(costOf(s).events.filter((e) => e === 'escalated').length, told).toBeLessThanOrEqual(1);
    const posts = calls.filter((c) => c.method === 'chat.postMessage');
    // The storm's end posts each alert still open its root and outlived reply at once (docs/alerts.md): 4 × 2.
    expect(peakPerMinute(posts), told).toBeLessThanOrEqual(8);
    // The storm ends below 5 open: at most 4 alerts outlive it, each a root, its outlived reply and its recovery.
    expect(threads.length, told).toBeLessThanOrEqual(2 + 4);
    expect(posts.length, told).toBeLessThanOrEqual(2 + 2 + 4 * 3);
  });
});
