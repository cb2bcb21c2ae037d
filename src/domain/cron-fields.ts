/**
 * Why cron-parser refused a five-field expression, in plain words naming the
 * field and its value, and what that field does read: cron-parser says
 * `Constraint error, got range NaN-2 expected range 1-31` for `L-2`, and
 * `cannot repeat at every 0 time` for `5/0`. Asked only once cron-parser has
 * refused the expression (src/domain/cron.ts `checkCron`), so it never
 * refuses what cron-parser reads; undefined when it finds nothing to name
 * (the caller then gives cron-parser's own words). Pure.
 */

interface Field {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  /** What the field reads beyond numbers, ranges, lists and steps. */
  extra?: string;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

const FIELDS: readonly Field[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31, extra: 'L (the last day), LW (the last weekday), 15W (the weekday nearest the 15th)' },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day of week', min: 0, max: 7, names: DAYS, extra: '5L (the last Friday of the month), 1#2 (the second Monday); 0 and 7 are both Sunday' },
];

export function cronFieldProblem(fields: readonly string[]): string | undefined {
  for (let i = 0; i < FIELDS.length && i < fields.length; i++) {
    const field = FIELDS[i]!;
    const value = fields[i]!;
    for (const part of value.split(',')) {
      const problem = partProblem(field, part);
      if (problem) return `${field.name} "${value}": ${problem}; ${reads(field)}`;
    }
  }
  return undefined;
}

function reads(field: Field): string {
  const names = field.names ? ` or names (${field.names[0]!.toUpperCase()}-${field.names[field.names.length - 1]!.toUpperCase()})` : '';
  return `the ${field.name} reads ${field.min}-${field.max}${names}, *, ranges (1-5), lists (1,3) and steps (*/15)${field.extra ? `, and ${field.extra}` : ''}`;
}

function partProblem(field: Field, part: string): string | undefined {
  if (part === '') return 'an empty value in the list';
  const slash = part.indexOf('/');
  if (slash >= 0) {
    const step = part.slice(slash + 1);
    if (!/^\d+$/.test(step)) return `the step after "/" must be a whole number, got "${step}"`;
    if (Number(step) === 0) return `a step of 0 ("${part}") never moves on; a step is 1 or more`;
    if (slash === 0) return `nothing before "/": write "*/${step}" for every ${step}, or "M/${step}" from M on`;
    return baseProblem(field, part.slice(0, slash));
  }
  return specialProblem(field, part) ?? baseProblem(field, part);
}

/** The L, W and # forms of the two day fields (W and its neighbours are checked in cron.ts). */
function specialProblem(field: Field, part: string): string | undefined {
  if (!/[lw#]/i.test(part.replace(/[a-z]{3}/gi, (w) => (isName(field, w) ? '0' : w)))) return undefined;
  if (field.name === 'day of month') {
    if (/^L-\d+$/i.test(part)) return `a day counted back from the last (${part}) is not supported`;
    if (/^(L|LW|\d{1,2}W)$/i.test(part)) return undefined;
    return `L and W are read only as L, LW or a day with W (${part} is none), not in a range or with an offset`;
  }
  if (field.name === 'day of week') {
    if (/^L$/i.test(part)) return 'L alone is not read in the day of week; "5L" is the last Friday of the month';
    const hash = /^([0-7]|[a-z]{3})#(\d*)$/i.exec(part);
    if (hash) return /^[1-5]$/.test(hash[2]!) ? undefined : `the occurrence after # must be 1 to 5 ("1#2": the second Monday), got "${hash[2]}"`;
    const last = /^([0-9]+|[a-z]{3})L$/i.exec(part);
    if (last) return valueProblem(field, last[1]!);
    return `L and # are read only as a day with L (5L) or with # (1#2) (${part} is neither), not in a range`;
  }
  return 'L, W and # are read only in the day of month and the day of week';
}

function baseProblem(field: Field, base: string): string | undefined {
  if (base === '*') return undefined;
  if (base === '?') return field.name === 'day of month' || field.name === 'day of week' ? undefined : '? is read only in the day of month and the day of week';
  const range = /^([^-]*)-([^-]*)$/.exec(base);
  if (!range) return base.includes('-') ? `"${base}" is not a range (a range is low-high, such as 1-5)` : valueProblem(field, base);
  const [, low, high] = range as unknown as [string, string, string];
  if (low === '' || high === '') return `"${base}" is not a range (a range is low-high, such as 1-5)`;
  const problem = valueProblem(field, low) ?? valueProblem(field, high);
  if (problem) return problem;
  if (numberOf(field, low) > numberOf(field, high)) return `the range ${base} runs backwards; a range goes from low to high (a range that wraps is two: 22-23,0-2)`;
  return undefined;
}

function valueProblem(field: Field, value: string): string | undefined {
  if (isName(field, value)) return undefined;
  if (!/^\d+$/.test(value)) return `"${value}" is not a number${field.names ? ' or a name' : ''}`;
  const n = Number(value);
  return n < field.min || n > field.max ? `${n} is out of range` : undefined;
}

function isName(field: Field, value: string): boolean {
  return !!field.names?.includes(value.toLowerCase());
}

function numberOf(field: Field, value: string): number {
  const named = field.names?.indexOf(value.toLowerCase()) ?? -1;
  return named >= 0 ? named + field.min : Number(value);
}
