import { wallIterator } from '../../src/domain/cron.js';
import { zoneOf } from '../../src/domain/zone.js';

/**
 * When real schedulers start a crontab line's job, minute by real minute,
 * as the job's own report (a ping) would tell the bot. Written from their
 * sources, independently of the bot's DST rule (src/domain/schedule.ts):
 *   - `vixie`: Vixie cron and cronie (cron.c): on a forward jump of up to
 *     three hours, "wildcard" jobs (minute or hour field starting with `*`)
 *     run for the new minute only and fixed-time jobs for every minute
 *     skipped, all right after the jump; after a backward jump, until the
 *     clock is back where it was, only wildcard jobs run;
 *   - `real-minutes`: a Kubernetes CronJob (robfig/cron) and BusyBox crond
 *     walk real time and run a job at each minute whose wall-clock reading
 *     matches: a time in the gap never comes, a repeated time comes twice.
 */
export type OutsideScheduler = 'vixie' | 'real-minutes';

const MINUTE = 60_000;

const matches = (cron: string, wall: number) => wallIterator(cron, wall - MINUTE).next().getTime() === wall;
const isWildcard = (cron: string) => {
  const [minute = '', hour = ''] = cron.trim().split(/\s+/);
  return minute.startsWith('*') || hour.startsWith('*');
};

/** The instants in [from, to) at which `scheduler` starts a job of `cron` in `tz`, oldest first. */
export function outsideStarts(scheduler: OutsideScheduler, cron: string, tz: string, from: Date, to: Date): Date[] {
  const zone = zoneOf(tz);
  const out: Date[] = [];
  const wildcard = isWildcard(cron);
  let previous = zone.wallOf(from.getTime() - MINUTE);
  let reached = previous;
  for (let m = from.getTime(); m < to.getTime(); m += MINUTE) {
    const wall = zone.wallOf(m);
    if (scheduler === 'real-minutes') {
      if (matches(cron, wall)) out.push(new Date(m));
    } else if (wall <= reached) {
      // Back in time: wildcard jobs only, until the clock is where it was.
      if (wildcard && matches(cron, wall)) out.push(new Date(m));
    } else if (wall - previous > MINUTE) {
      // Jumped forward: a wildcard job for the new minute; a fixed-time job for each minute skipped, and this one.
      const walls = wildcard ? [wall] : Array.from({ length: (wall - previous) / MINUTE }, (_, i) => previous + (i + 1) * MINUTE);
      for (const w of walls) if (matches(cron, w)) out.push(new Date(m));
    } else if (matches(cron, wall)) {
      out.push(new Date(m));
    }
    previous = wall;
    reached = Math.max(reached, wall);
  }
  return out;
}
