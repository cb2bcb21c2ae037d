import { CronExpressionParser } from 'cron-parser';

/**
 * Fire times of a cron expression in a time zone. cron-parser is always given
 * `currentDate` and `tz`: nothing here reads the clock, and DST is the zone's
 * (a 02:30 job on a spring-forward night fires at 03:30 local; on a fall-back
 * night it fires once).
 */

export type CronCheck = { ok: true } | { ok: false; reason: string };

const MACROS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

export function checkCron(cron: string): CronCheck {
  const trimmed = cron.trim();
  if (!MACROS.has(trimmed.toLowerCase())) {
    const fields = trimmed.split(/\s+/).length;
    if (fields !== 5) return { ok: false, reason: `expected 5 fields (minute hour day-of-month month day-of-week), got ${fields}` };
  }
  try {
    const it = CronExpressionParser.parse(trimmed, { currentDate: new Date(0), tz: 'UTC' });
    it.next();
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return tz.length > 0;
  } catch {
    return false;
  }
}

/** The first `count` fire times strictly after `from`. */
export function fireTimesAfter(cron: string, tz: string, from: Date, count: number): Date[] {
  const it = CronExpressionParser.parse(cron, { currentDate: from, tz });
  const out: Date[] = [];
  for (let i = 0; i < count; i++) out.push(it.next().toDate());
  return out;
}

/** The first fire time strictly after `from`. */
export function nextFireAfter(cron: string, tz: string, from: Date): Date {
  return CronExpressionParser.parse(cron, { currentDate: from, tz }).next().toDate();
}

/** The latest fire time at or before `at`, if there is one. */
export function latestFireAtOrBefore(cron: string, tz: string, at: Date): Date | undefined {
  // cron-parser's prev() is strictly before currentDate; nudge by 1 ms to include `at` itself.
  const it = CronExpressionParser.parse(cron, { currentDate: new Date(at.getTime() + 1), tz });
  try {
    return it.prev().toDate();
  } catch {
    return undefined;
  }
}

/** Every fire time in (from, to], oldest first, at most `limit`. */
export function fireTimesBetween(cron: string, tz: string, from: Date, to: Date, limit = 10_000): Date[] {
  const it = CronExpressionParser.parse(cron, { currentDate: from, endDate: to, tz });
  const out: Date[] = [];
  while (out.length < limit && it.hasNext()) out.push(it.next().toDate());
  return out;
}
