import { formatDistanceStrict, formatDuration as formatDurationFns, intervalToDuration, type Duration } from 'date-fns';
import { isTimeZone, zoneLabel } from './time-zone.js';
import { zoneOf } from './zone.js';

/**
 * Durations and times in words, and the one parser for durations people type:
 * `/scheduler silence … 1h30m`, the workflows file and replay scenarios all
 * read them here. Pure: `now` is a parameter.
 */

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Longer than this is a typo or a way to silence forever; "until resolved" exists for that. */
export const MAX_DURATION_MS = 365 * UNIT_MS.d;

export type DurationReading = { ok: true; ms: number } | { ok: false; reason: string };

/** "90s", "30m", "1h30m", "4h", "2d" → milliseconds, or why not. */
export function readDuration(text: string): DurationReading {
  const trimmed = text.trim().toLowerCase();
  if (!/^(\d{1,9}[smhd])+$/.test(trimmed)) {
    return { ok: false, reason: `"${text.trim().slice(0, 40)}" is not a duration; use something like 90s, 30m, 1h30m, 4h or 2d` };
  }
  let ms = 0;
  for (const [, n, unit] of trimmed.matchAll(/(\d+)([smhd])/g)) ms += Number(n) * UNIT_MS[unit as keyof typeof UNIT_MS];
  if (ms <= 0) return { ok: false, reason: `"${trimmed}" is zero; a duration must be longer than that` };
  if (ms > MAX_DURATION_MS) return { ok: false, reason: `"${trimmed}" is longer than ${formatDuration(MAX_DURATION_MS)}, the longest duration accepted` };
  return { ok: true, ms };
}

/** The milliseconds of a duration, or undefined when `text` is not one (see readDuration for the reason). */
export function parseDuration(text: string): number | undefined {
  const r = readDuration(text);
  return r.ok ? r.ms : undefined;
}

const UNITS = ['years', 'months', 'days', 'hours', 'minutes', 'seconds'] as const satisfies readonly (keyof Duration)[];

/**
 * A duration for people: its two largest units, the second rounded
 * ("7 hours 2 minutes", "2 days 1 hour" for two days and 59 minutes,
 * "1 minute 30 seconds", "1 month 14 days"). Months and years are counted
 * on the calendar from a fixed start, so the same length always reads the same.
 */
export function formatDuration(ms: number): string {
  const granularity = ms < UNIT_MS.h ? UNIT_MS.s : ms < UNIT_MS.d ? UNIT_MS.m : ms < 30 * UNIT_MS.d ? UNIT_MS.h : UNIT_MS.d;
  const rounded = Math.max(0, Math.round(ms / granularity) * granularity);
  if (rounded < UNIT_MS.s) return '0 seconds';
  const parts = intervalToDuration({ start: 0, end: rounded });
  const first = UNITS.findIndex((u) => (parts[u] ?? 0) > 0);
  const format = UNITS.slice(first, first + 2).filter((u) => (parts[u] ?? 0) > 0);
  return formatDurationFns(parts, { format });
}

/** The units of compactDuration, largest first, with the width a second unit is padded to ("7h 02m", "3d 4h"). */
const COMPACT_UNITS = [
  { name: 'd', ms: UNIT_MS.d, pad: 1 },
  { name: 'h', ms: UNIT_MS.h, pad: 1 },
  { name: 'm', ms: UNIT_MS.m, pad: 2 },
  { name: 's', ms: UNIT_MS.s, pad: 2 },
] as const;

/**
 * A duration as Slack shows it, the compact form DESIGN.md names ("resolved
 * after 7h 02m"): its two largest units, the second rounded, minutes and
 * seconds after a larger unit in two digits, a second unit of zero left out:
 * "45s", "12m", "2m 05s", "7h 02m", "7h", "3d 4h". Rounded first, so 59m 59.6s
 * reads "1h", never "60m". Every destination's event sentence uses it; words
 * (formatDuration) stay for the mailed digest and the webhook's `words` fields.
 */
export function compactDuration(ms: number): string {
  const granularity = ms < UNIT_MS.h ? UNIT_MS.s : ms < UNIT_MS.d ? UNIT_MS.m : UNIT_MS.h;
  const rounded = Math.max(0, Math.round(ms / granularity) * granularity);
  const first = COMPACT_UNITS.findIndex((u) => rounded >= u.ms);
  if (first < 0) return '0s';
  const big = COMPACT_UNITS[first]!;
  const text = `${Math.floor(rounded / big.ms)}${big.name}`;
  const small = COMPACT_UNITS[first + 1];
  const rest = small ? Math.floor((rounded % big.ms) / small.ms) : 0;
  return small && rest > 0 ? `${text} ${String(rest).padStart(small.pad, '0')}${small.name}` : text;
}

/** "in 40 minutes", "3 hours ago": `at` relative to `now`. */
export function relativeTime(at: Date, now: Date): string {
  if (Math.abs(at.getTime() - now.getTime()) < UNIT_MS.s) return 'just now';
  return formatDistanceStrict(at, now, { addSuffix: true, roundingMethod: 'round' });
}

/** A cadence of `seconds` between ticks in words: "every 5 minutes", "hourly", "daily". */
export function cadenceInWords(seconds: number): string {
  const known: [number, string][] = [
    [60, 'every minute'],
    [3600, 'hourly'],
    [86_400, 'daily'],
    [7 * 86_400, 'weekly'],
  ];
  for (const [s, words] of known) if (seconds === s) return words;
  const calendar = calendarCadence(seconds / 86_400);
  if (calendar) return calendar;
  if (seconds < 3600 && seconds % 60 === 0) return `every ${seconds / 60} minutes`;
  if (seconds < 86_400 && seconds % 3600 === 0) return `every ${seconds / 3600} hours`;
  if (seconds % 86_400 === 0) return `every ${seconds / 86_400} days`;
  return `about every ${formatDuration(seconds * 1000)}`;
}

/**
 * A gap of months or years as the calendar names it: the typical gap of
 * `@monthly` is 31 days (most months have 31), of a quarterly cron 91.5, of
 * `@yearly` 365 and of a leap-day job 1461, which read "monthly", "every 3
 * months", "yearly", "every 4 years", not "every 1461 days".
 */
function calendarCadence(days: number): string | null {
  const years = Math.round(days / 365.25);
  if (years >= 1 && days >= 365 * years && days <= 366 * years) return years === 1 ? 'yearly' : `every ${years} years`;
  const months = Math.round(days / 30.44);
  if (months >= 1 && months <= 11 && days >= 28 * months && days <= 31 * months) return months === 1 ? 'monthly' : `every ${months} months`;
  return null;
}

/**
 * A time on a zone's wall clock, saying which zone: "2026-03-10 09:05
 * Europe/Berlin" ("… UTC" in UTC, as utcText); a time the fall-back night
 * repeats carries its offset, "2026-10-25 02:30+01:00 Europe/Berlin". For texts one reader zone
 * cannot be chosen for but a tenant's can (the digest: its schedule's zone).
 * A zone Intl does not know is shown as UTC.
 */
export function zoneText(at: Date, timeZone: string): string {
  const tz = shownZone(timeZone);
  return `${wallText(at, tz)} ${zoneLabel(tz)}`;
}

/** A span in a zone, the second date left out when it is the first's: "2026-03-10 01:00 to 02:00 Europe/Berlin". */
export function zoneRangeText(from: Date, to: Date, timeZone: string): string {
  const tz = shownZone(timeZone);
  const [a, b] = [wallText(from, tz), wallText(to, tz)];
  return `${a} to ${a.slice(0, 10) === b.slice(0, 10) ? b.slice(11) : b} ${zoneLabel(tz)}`;
}

const shownZone = (timeZone: string) => (isTimeZone(timeZone) ? timeZone : 'UTC');

/**
 * The wall clock at `at`, "2026-03-10 09:05"; with its UTC offset,
 * "2026-10-25 02:30+01:00", when the fall-back night repeats that time and
 * the wall clock alone would not say which of the two it was.
 */
function wallText(at: Date, tz: string): string {
  const zone = zoneOf(tz);
  const wall = zone.wallOf(at.getTime());
  const text = new Date(wall).toISOString().slice(0, 16).replace('T', ' ');
  return zone.instantsOf(wall, true).length > 1 ? `${text}${offsetText(zone.offsetAt(at.getTime()))}` : text;
}

/** An offset as ISO 8601 writes it: "+02:00", "-03:30". */
function offsetText(offsetMs: number): string {
  const minutes = Math.round(Math.abs(offsetMs) / 60_000);
  return `${offsetMs < 0 ? '-' : '+'}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

/** Plain-text time for fallbacks, email and modals: "2026-03-10 09:05 UTC". */
export function utcText(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** "1 consecutive failure", "3 consecutive failures". */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
