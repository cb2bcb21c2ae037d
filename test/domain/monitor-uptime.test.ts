import { describe, expect, it } from 'vitest';
import { watchedThroughout, type UptimeSpan } from '../../src/domain/monitor-uptime.js';

const t = (hhmmss: string) => new Date(`2026-03-10T${hhmmss}Z`);
const span = (from: string, to: string): UptimeSpan => ({ startedAt: t(from), lastSeenAt: t(to) });
const SLACK = 60_000;

describe('watchedThroughout: did the bot watch all of a tick\'s grace?', () => {
  const cases: [string, UptimeSpan[], string, string, boolean][] = [
    ['one replica up before and after', [span('01:00:00', '03:00:00')], '02:00:00', '02:30:00', true],
    ['no replica at all', [], '02:00:00', '02:30:00', false],
    ['up at the tick, gone for the rest of the grace', [span('01:00:00', '02:05:00')], '02:00:00', '02:30:00', false],
    ['gone during the grace, back before its end', [span('01:00:00', '02:05:00'), span('02:20:00', '03:00:00')], '02:00:00', '02:30:00', false],
    ['last seen 30 s before the tick', [span('01:00:00', '01:59:30')], '02:00:00', '02:30:00', false],
    ['started after the tick', [span('02:00:10', '03:00:00')], '02:00:00', '02:30:00', false],
    ['a restart within the slack: the old one last seen 02:09:55, the new one from 02:10:20', [span('01:00:00', '02:09:55'), span('02:10:20', '03:00:00')], '02:00:00', '02:30:00', true],
    ['a restart longer than the slack', [span('01:00:00', '02:09:00'), span('02:10:30', '03:00:00')], '02:00:00', '02:30:00', false],
    ['the slack carries the end: last seen 20 s before the grace ends', [span('01:00:00', '02:29:40')], '02:00:00', '02:30:00', true],
    ['overlapping replicas, listed in any order', [span('02:15:00', '03:00:00'), span('01:00:00', '02:20:00'), span('01:30:00', '01:40:00')], '02:00:00', '02:30:00', true],
    ['a replica long dead before an instant window', [span('01:00:00', '01:10:00')], '02:00:00', '02:00:00', false],
    ['an instant window inside a life', [span('01:00:00', '02:10:00')], '02:00:00', '02:00:00', true],
  ];
  it.each(cases)('%s', (_name, spans, from, to, expected) => {
    expect(watchedThroughout(spans, t(from), t(to), SLACK)).toBe(expected);
  });
});
