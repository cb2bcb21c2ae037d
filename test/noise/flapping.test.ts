import { describe, expect, it } from 'vitest';
import type { ScenarioInput } from '../../src/replay/scenario.js';
import { replay } from '../scenarios/support.js';
import { costOf, threadsIn, timeline } from './noise-support.js';

const base = { platformChannel: 'CPLATFORM', tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME', oncall: { users: ['UONCALL'] } }] };

/** Every tick of a day; tick i fails when `fails(i)`. */
function pattern(workflow: string, from: string, stepMinutes: number, count: number, fails: (i: number) => boolean): NonNullable<ScenarioInput['outcomes']> {
  const out: NonNullable<ScenarioInput['outcomes']> = [];
  for (let i = 0; i < count; i++) {
    if (!fails(i)) continue;
    const at = new Date(Date.parse(from) + i * stepMinutes * 60_000).toISOString();
    out.push({ workflow, from: at, to: at, attempts: [{ status: 'failed', error: 'flaky upstream' }] });
  }
  return out;
}

/**
 * Noise audit: a 5-minute job flapping for a day. Budget: one thread, two at
 * most (the first flips before the history shows flapping), told once that it
 * flaps, never a thread per flip. A job alternating every tick never reaches
 * 3 failures in a row; it was a known limit that it opened nothing (144
 * failures a day unseen). Now it fails intermittently (5 of the last 10 runs,
 * src/domain/flapping.ts): one thread, opened as such (its opening tells the
 * flapping, no separate note), open all day since it never succeeds 3 times in a row.
 */
describe('noise audit: flapping for a day', { timeout: 600_000 }, () => {
  for (const [name, fails, maxThreads] of [
    ['alternating', (i: number) => i % 2 === 0, 1],
    ['3 failures then a success', (i: number) => i % 4 !== 3, 2],
  ] as const) {
    it(`*/5 ${name}`, async () => {
      const { transcript } = await replay(
        {
          ...base,
          start: '2026-03-09T23:58:00Z',
          until: '2026-03-11T00:10:00Z',
          workflows: [{ tenant: 'acme', name: 'flappy', cron: '*/5 * * * *' }],
          outcomes: pattern('flappy', '2026-03-10T00:00:00Z', 5, 288, fails),
        },
        { escalationIntervalSeconds: 300 },
      );
      const threads = threadsIn(transcript.calls, 'CACME');
      const told = threads.map((t) => timeline(t).join(' | ')).join('\n');
      expect(threads.length, told).toBeLessThanOrEqual(maxThreads);
      // Something is told: the failures are never unseen.
      expect(threads.length, told).toBeGreaterThanOrEqual(1);
      expect(threads[0]!.events[0], told).toBe('opened');
      // Its root says it flaps beside the count in a row (one failure at most, when it opened intermittently).
      if (name === 'alternating') expect(threads[0]!.root.text).toMatch(/flappy, 1 failure, flapping/);
      const events = threads.flatMap((t) => costOf(t).events);
      expect(events.filter((e) => e === 'flapping').length, told).toBeLessThanOrEqual(name === 'alternating' ? 0 : 1);
      // Critical and unowned all day, the on-call is paged again on backing-off periods (8 in a day at most).
      expect(events.filter((e) => e === 'reminder').length, told).toBeLessThanOrEqual(8);
      expect(events.filter((e) => e !== 'reminder').length, told).toBeLessThanOrEqual(4 * maxThreads + 2);
    });
  }
});
