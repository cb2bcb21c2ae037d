import { describe, expect, it } from 'vitest';
import type { ReplayResult } from '../../src/replay/replay-scenario.js';
import { bundledReplay } from './bundled-replay.js';
import { eventOf, storyByChannel, threadsOf } from './transcript-shape.js';

/** The run-duration scenarios bundled for issue 16, through the real engine: the shape of their transcripts. */

const { replay, db } = bundledReplay();

const roots = (r: ReplayResult) => r.transcript.calls.filter((c) => c.method === 'chat.postMessage' && c.thread_ts === null);

describe('run-duration scenarios', { timeout: 120_000 }, () => {
  it('a nightly that usually takes 20 minutes hangs: "running long" at 03:00, five hours before its timeout', async () => {
    const result = await replay('nightly-hangs.json');
    const story = storyByChannel(threadsOf(result.transcript.calls));
    for (const channel of ['CACME', 'CPLATFORM']) expect(story[channel]).toEqual({ 'nightly-pipeline': [['opened', 'escalated', 'resolved']] });
    // An hour in: three times the median of the week's 20-minute nights (one of 25 minutes does not move it).
    for (const root of roots(result)) {
      expect(eventOf(root)).toBe('opened');
      expect(root.at).toBe('2026-03-10T03:00:00.000Z');
    }
    const opened = await db().selectFrom('alertEvents').select(['data']).where('kind', '=', 'opened').executeTakeFirstOrThrow();
    expect(opened.data).toMatchObject({ severity: 'warning', consecutiveFailures: 0, cause: { kind: 'running_long', afterSeconds: 3600, normal: { medianSeconds: 1200, samples: 7 } } });
    // The hung attempt timed out at 08:00 (escalating the warning then), the retry succeeded 20 minutes later.
    const runs = await db().selectFrom('runs').select(['attempt', 'attemptStatus', 'error', 'durationSeconds', 'longNoticedAt']).where('tick', '=', new Date('2026-03-10T02:00:00Z')).orderBy('attempt').execute();
    expect(runs).toEqual([
      { attempt: 1, attemptStatus: 'failed', error: null, durationSeconds: 21_600, longNoticedAt: new Date('2026-03-10T03:00:00Z') },
      { attempt: 2, attemptStatus: 'succeeded', error: null, durationSeconds: 1200, longNoticedAt: null },
    ]);
    const escalated = result.transcript.calls.filter((c) => eventOf(c) === 'escalated');
    expect(escalated.every((c) => c.at === '2026-03-10T08:00:00.000Z')).toBe(true);
  });

  it('a completion deadline missed while the run is still going: a critical alert at the deadline, resolved when the run succeeds', async () => {
    const result = await replay('completion-deadline-missed.json');
    const story = storyByChannel(threadsOf(result.transcript.calls));
    for (const channel of ['CACME', 'CPLATFORM']) expect(story[channel]).toEqual({ 'nightly-export': [['opened', 'resolved']] });
    // 06:00 in Berlin (CET) is 05:00 UTC; the run started at 01:00 UTC and takes five hours.
    for (const root of roots(result)) expect(root.at).toBe('2026-03-10T05:00:00.000Z');
    const opened = await db().selectFrom('alertEvents').select(['data']).where('kind', '=', 'opened').executeTakeFirstOrThrow();
    expect(opened.data).toMatchObject({ severity: 'critical', cause: { kind: 'completion_missed', tick: '2026-03-10T01:00:00.000Z', deadline: '2026-03-10T05:00:00.000Z', running: true } });
    const resolved = result.transcript.calls.find((c) => eventOf(c) === 'resolved')!;
    expect(resolved.at).toBe('2026-03-10T06:00:00.000Z');
  });
});
