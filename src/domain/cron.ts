import { cronFieldProblem } from './cron-fields.js';
import { CronDayOfWeek, CronExpression, CronExpressionParser, CronFieldCollection } from 'cron-parser';

/**
 * A cron expression read the way crontab(5) reads it, on cron-parser 5, in
 * wall-clock time (UTC-encoded instants: `schedule.ts` maps them onto a
 * zone). Where cron-parser reads an expression differently from Vixie cron
 * and cronie (the schedulers an observed workflow's runs come from), the
 * crontab meaning wins:
 *   - day of month and day of week: "if both fields are restricted (i.e.,
 *     don't start with *), the command will be run when either field
 *     matches" (crontab(5)). A field that starts with `*` (`*∕2`) is not
 *     restricted, so `0 0 *∕2 * 1` fires on odd days that are Mondays;
 *     cron-parser counts only a bare `*` (or `?`) as unrestricted and fired
 *     it on every odd day and every Monday;
 *   - a value named twice (`0,7` for Sunday, `1-5,3`) is that value once
 *     (cron-parser refused the expression);
 *   - macros: `@midnight` is `@daily`; one typed in capitals (`@DAILY`) is
 *     stored in lower case, the only case crontab reads (cron-parser refused
 *     both with "cannot resolve alias"); the expression is stored trimmed
 *     (cron-parser read `@daily ` as a broken five-field line).
 * Jenkins' `H` (a hashed value) is refused: cron-parser picks it at random in
 * each process, so replicas, and the same replica after a restart, would
 * fire the workflow at different minutes. Pure.
 */

export type CronCheck = { ok: true } | { ok: false; reason: string };

const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const CRON_NAMES = /\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|sun|mon|tue|wed|thu|fri|sat)\b/gi;

const isMacro = (cron: string) => Object.hasOwn(MACROS, cron.toLowerCase());

/** The spelling an expression is stored under: trimmed, a macro in lower case (crontab reads no other). */
export function normalizeCron(cron: string): string {
  const trimmed = cron.trim();
  return isMacro(trimmed) ? trimmed.toLowerCase() : trimmed;
}

export function checkCron(cron: string): CronCheck {
  const normal = normalizeCron(cron);
  if (!isMacro(normal)) {
    const fields = normal.split(/\s+/);
    if (fields.length !== 5) return { ok: false, reason: fieldCountProblem(normal, fields.length) };
    const hashed = fields.find((f) => /h/i.test(f.replace(CRON_NAMES, '0')));
    if (hashed !== undefined) return { ok: false, reason: `"${hashed}": H (a hashed value) is not supported, since it would differ between replicas; write the value itself` };
  }
  try {
    wallIterator(normal, 0).next();
    return { ok: true };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    // cron-parser's words for a day of month no month named has (`0 0 30 2 *`, `0 0 31 4,6 *`).
    if (/explicit day of month/i.test(reason)) return { ok: false, reason: neverFires(normal) };
    // Ours (W, day of month with day of week) are plain already; cron-parser's are named field by field (cron-fields.ts).
    if (isMacro(normal) || !/^(Constraint error|Invalid|CronDayOfWeek|CronDayOfMonth|CronMonth|CronHour|CronMinute)/i.test(reason)) return { ok: false, reason };
    return { ok: false, reason: cronFieldProblem(normal.split(/\s+/)) ?? `cannot be read (${reason})` };
  }
}

/** Why `0 0 30 2 *` is refused, naming the two fields at odds and their values as typed. */
function neverFires(cron: string): string {
  const [, , dom, month] = cron.split(/\s+/);
  return `never fires: no month the month field "${month}" names has the day of month "${dom}" (February has 29 days at most; April, June, September and November 30)`;
}

/**
 * Why an expression with the wrong number of fields is refused. Six fields is
 * a seconds field (Quartz, Spring, node-cron): refused, not read, since the
 * bot and crontab schedule to the minute, and reading the first field as
 * minutes would run `0 0 9 * * *` at midnight every day of September.
 */
function fieldCountProblem(cron: string, count: number): string {
  const expected = 'expected 5 fields (minute hour day-of-month month day-of-week)';
  if (cron.startsWith('@')) return `${expected}, or one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly; "${cron.split(/\s+/)[0]}" is none of them (@reboot is no schedule)`;
  if (count === 6) return `${expected}, got 6: a seconds field is not supported (the bot, like cron, schedules to the minute); leave out the first field`;
  if (count === 7) return `${expected}, got 7: seconds and year fields (Quartz) are not supported; leave out the first and the last`;
  return `${expected}, got ${count}`;
}

/**
 * Whether a crontab (Vixie cron, cronie, BusyBox) can hold this schedule, for
 * the crontab line an observed workflow is given. The parser the bot uses
 * also reads extensions no crontab does (`L`, `#`, `?`, `W`): a line with one
 * is refused by `crontab`, so none is offered. Pure.
 */
export function crontabCheck(cron: string): CronCheck {
  const normal = normalizeCron(cron);
  if (isMacro(normal)) return { ok: true };
  const field = normal.split(/\s+/).find((f) => !/^[0-9*,/-]+$/.test(f.replace(CRON_NAMES, '0')));
  return field === undefined ? { ok: true } : { ok: false, reason: `cron cannot read "${field}" (L, W, #, ? and H are not crontab syntax)` };
}

/** Wall-clock fire times, as UTC-encoded instants (cron-parser in UTC has no DST to get wrong). */
export function wallIterator(cron: string, wallMs: number) {
  const { expression, dayOk } = compiled(cron);
  const it = new CronExpression(expression.fields, { currentDate: new Date(wallMs), tz: 'UTC' });
  if (!dayOk) return { next: () => it.next().toDate(), prev: () => it.prev().toDate() };
  // Day of month AND day of week, or a `W` day: walk the looser schedule, a day that does not qualify skipped whole.
  const walk = (step: () => Date, dayAway: (day: number) => number) => {
    for (let i = 0; i < MAX_DAYS_TRIED; i++) {
      const wall = step();
      if (dayOk(wall)) return wall;
      const day = Math.floor(wall.getTime() / DAY_MS) * DAY_MS;
      it.reset(new Date(dayAway(day)));
    }
    throw new Error(`no day within ${MAX_DAYS_TRIED} days tried is one the expression names (day of month and day of week together)`);
  };
  return {
    next: () => walk(() => it.next().toDate(), (day) => day + DAY_MS - 1000),
    prev: () => walk(() => it.prev().toDate(), (day) => day),
  };
}

/** Does the hour field allow all 24 hours? Then the job keeps real spacing through a repeated hour. */
export function namesEveryHour(cron: string): boolean {
  return compiled(cron).expression.fields.hour.values.length === 24;
}

const DAY_MS = 86_400_000;
/** Days of month tried for a weekday before giving up: decades, more than any reachable combination needs (a 29 February on a Sunday: 7). */
const MAX_DAYS_TRIED = 5_000;

interface Compiled {
  expression: CronExpression;
  /**
   * Set when the expression walked is looser than the schedule: day of month
   * and day of week must both match (crontab's rule above), or the day of
   * month is a `W` day (walked as every day). Whether a wall day qualifies.
   */
  dayOk?: (wall: Date) => boolean;
}

const memo = new Map<string, Compiled>();

/** Parsing is a third of a fire time's cost, and a few expressions serve every workflow: each is compiled once (its fields never change). */
function compiled(cron: string): Compiled {
  let found = memo.get(cron);
  if (!found) {
    found = compile(cron);
    if (memo.size > 10_000) memo.clear();
    memo.set(cron, found);
  }
  return found;
}

function compile(cron: string): Compiled {
  const normal = normalizeCron(cron);
  const text = isMacro(normal) ? MACROS[normal.toLowerCase()]! : normal;
  const [, , dom = '*', , dow = '*'] = text.split(/\s+/);
  const unrestricted = (f: string) => f === '*' || f === '?';
  const nearest = nearestWeekdayRule(dom, dow, unrestricted);
  if (nearest) {
    const withDom = (d: string) => text.split(/\s+/).map((f, i) => (i === 2 ? d : f)).join(' ');
    // `30W` in February never fires, as `30` there does not: cron-parser says so for the plain day.
    if (!/^L/i.test(dom)) parse(withDom(dom.slice(0, -1)));
    return { expression: parse(withDom('*')), dayOk: nearest };
  }
  const expression = parse(text);
  const both = !unrestricted(dom) && !unrestricted(dow) && (dom.startsWith('*') || dow.startsWith('*'));
  const plainDays = !/[lw#]/i.test(dom) && !/[l#]/i.test(dow);
  if (!both || !plainDays) return { expression };
  const weekdays = new Set(expression.fields.dayOfWeek.values.map((d) => Number(d) % 7));
  const anyWeekday = CronFieldCollection.from(expression.fields, { dayOfWeek: new CronDayOfWeek([0, 1, 2, 3, 4, 5, 6], { rawValue: '*' }) });
  return { expression: new CronExpression(anyWeekday, { currentDate: new Date(0), tz: 'UTC' }), dayOk: (wall) => weekdays.has(wall.getUTCDay()) };
}

/**
 * A `W` day of month (Quartz's, which cron-parser does not read): `15W` is
 * the weekday (Monday to Friday) nearest the 15th within its month (a
 * Saturday's is the Friday before, a Sunday's the Monday after, never across
 * the month's edge: `1W` on a Saturday is Monday the 3rd), `LW` the month's
 * last weekday; a month without that day has none. Only with an unrestricted
 * day of week (W already picks the weekday). Undefined when `dom` is no W day.
 */
function nearestWeekdayRule(dom: string, dow: string, unrestricted: (f: string) => boolean): ((wall: Date) => boolean) | undefined {
  const m = /^(L|\d{1,2})W$/i.exec(dom);
  if (!m && !/w/i.test(dom)) return undefined;
  if (!m) throw new Error(`day of month "${dom}": W is read as one day only, "15W" (the weekday nearest the 15th) or "LW" (the month's last weekday), not in a list or range`);
  const n = m[1]!.toUpperCase() === 'L' ? 0 : Number(m[1]);
  if (n < 0 || n > 31 || m[1] === '0') throw new Error(`day of month "${dom}": the day before W must be 1 to 31, or L`);
  if (!unrestricted(dow)) throw new Error(`day of month "${dom}" with day of week "${dow}": W already picks a weekday; write * for the day of week`);
  return (wall) => {
    const y = wall.getUTCFullYear();
    const mo = wall.getUTCMonth();
    const last = new Date(Date.UTC(y, mo + 1, 0)).getUTCDate();
    const day = n === 0 ? last : n;
    if (day > last) return false;
    const weekday = new Date(Date.UTC(y, mo, day)).getUTCDay();
    let target = day;
    if (weekday === 6) target = day > 1 ? day - 1 : day + 2;
    else if (weekday === 0) target = day < last ? day + 1 : day - 2;
    return wall.getUTCDate() === target;
  };
}

/** cron-parser's parse, a value named twice in a list read once (see the top of this file). */
function parse(text: string): CronExpression {
  const options = { currentDate: new Date(0), tz: 'UTC' };
  try {
    return CronExpressionParser.parse(text, options);
  } catch (error) {
    if (!(error instanceof Error && error.message.includes('duplicate values'))) throw error;
    return CronExpressionParser.parse(text.split(/\s+/).map((field, i) => listedOnce(field, i)).join(' '), options);
  }
}

const FIELD_KEYS = ['minute', 'hour', 'dayOfMonth', 'month', 'dayOfWeek'] as const;

/** A list field as the values it names, each once (`0,5-7` → `0,5,6`); a field without a list as it is. */
function listedOnce(field: string, index: number): string {
  if (!field.includes(',')) return field;
  const values = new Set<number>();
  for (const item of field.split(',')) {
    const alone = FIELD_KEYS.map((_, i) => (i === index ? item : '*')).join(' ');
    for (const v of CronExpressionParser.parse(alone, { currentDate: new Date(0), tz: 'UTC' }).fields[FIELD_KEYS[index]!].values) {
      // L and the like are no value to list: such a field is left to cron-parser as typed.
      if (typeof v !== 'number') return field;
      values.add(index === 4 ? v % 7 : v);
    }
  }
  return [...values].sort((a, b) => a - b).join(',');
}
