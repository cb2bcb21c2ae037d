import { describe, expect, it } from 'vitest';
import { REPLAY_OPERATOR, replayActor, replayStart } from '../../src/domain/replay-window.js';

const at = (iso: string) => new Date(iso);
const since = at('2026-03-09T00:00:00Z');
const until = at('2026-03-16T00:00:00Z');
const DAY = 86_400_000;
const open = (workflow: string, openedAt: string, lastSuccessTick: string | null, firstTick: string | null = '2026-01-01T00:00:00Z') => ({
  workflow,
  openedAt: at(openedAt),
  lastSuccessTick: lastSuccessTick ? at(lastSuccessTick) : null,
  firstTick: firstTick ? at(firstTick) : null,
});

describe('replayStart (replay --from-db: alerts open when the period starts)', () => {
  it('starts at since when no alert is open then', () => {
    expect(replayStart(since, until, [], 31 * DAY)).toEqual({ start: since, rebuilt: [], cut: [] });
  });

  it('starts at the earliest last success before an open alert, so its streak is replayed', () => {
    const r = replayStart(since, until, [open('hourly', '2026-03-08T22:02:00Z', '2026-03-08T20:00:00Z'), open('daily', '2026-03-07T02:05:00Z', '2026-03-06T02:00:00Z')], 31 * DAY);
    expect(r).toEqual({ start: at('2026-03-06T02:00:00Z'), rebuilt: ['hourly', 'daily'], cut: [] });
  });

  it('a streak with no success before it starts at the first tick, else at the opening', () => {
    expect(replayStart(since, until, [open('new', '2026-03-08T03:00:00Z', null, '2026-03-08T01:00:00Z')], 31 * DAY).start).toEqual(at('2026-03-08T01:00:00Z'));
    expect(replayStart(since, until, [open('bare', '2026-03-08T03:00:00Z', null, null)], 31 * DAY).start).toEqual(at('2026-03-08T03:00:00Z'));
  });

  it('never reaches back more than the longest replay before until, and names the alert it cut', () => {
    const r = replayStart(since, until, [open('stuck', '2026-01-10T00:00:00Z', '2026-01-09T00:00:00Z'), open('hourly', '2026-03-08T22:02:00Z', '2026-03-08T20:00:00Z')], 31 * DAY);
    expect(r).toEqual({ start: new Date(until.getTime() - 31 * DAY), rebuilt: ['hourly'], cut: ['stuck'] });
  });
});

describe('replayActor (a manual run replayed as Run now)', () => {
  it('is the Slack user who asked, else the stand-in (the API, an operator by name)', () => {
    expect(replayActor('U0ONCALL')).toBe('U0ONCALL');
    expect(replayActor('W12345')).toBe('W12345');
    expect(replayActor(null)).toBe(REPLAY_OPERATOR);
    expect(replayActor('api (acme)')).toBe(REPLAY_OPERATOR);
  });
});
