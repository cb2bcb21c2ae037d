import { misspelledNames } from './names.js';
/**
 * The one spelling a time zone is stored under. Intl accepts any case
 * (`europe/berlin`) and every alias (`US/Pacific`), but cron reads `CRON_TZ`
 * (and the C library `TZ`) as a file under /usr/share/zoneinfo, which is
 * case-sensitive: `CRON_TZ=europe/berlin` falls back to UTC there. So every
 * zone a person types is stored as the canonical name of the zone it names,
 * which every system zoneinfo has:
 *   - the case is the tzdb's (`Europe/Berlin`, `America/Port-au-Prince`);
 *   - an alias becomes the zone it links to (`US/Pacific` is
 *     `America/Los_Angeles`; the tzdb's `backward` links, US/* among them,
 *     are an optional package on recent Debian and Ubuntu);
 *   - the UTC family (`Etc/UTC`, `GMT`, `Zulu`) is `UTC`.
 * Node 20's Intl (ICU, CLDR) resolves an alias to the zone it names, but
 * calls about twenty zones by a name the tzdb has since retired
 * (`Asia/Kolkata` resolves to `Asia/Calcutta`, `Europe/Kyiv` to
 * `Europe/Kiev`); RETIRED turns those back into the tzdb's names. A newer
 * Intl that keeps the alias typed (only fixing its case) still gives a valid
 * name. Pure: no clock, no file system.
 */

/** CLDR's canonical id → the tzdb's current name, where they differ (Node 20, ICU 78; tzdb 2025b). */
const RETIRED: Readonly<Record<string, string>> = {
  'Africa/Asmera': 'Africa/Asmara',
  'America/Buenos_Aires': 'America/Argentina/Buenos_Aires',
  'America/Catamarca': 'America/Argentina/Catamarca',
  'America/Cordoba': 'America/Argentina/Cordoba',
  'America/Jujuy': 'America/Argentina/Jujuy',
  'America/Mendoza': 'America/Argentina/Mendoza',
  'America/Coral_Harbour': 'America/Atikokan',
  'America/Indianapolis': 'America/Indiana/Indianapolis',
  'America/Louisville': 'America/Kentucky/Louisville',
  'America/Godthab': 'America/Nuuk',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Rangoon': 'Asia/Yangon',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'Europe/Kiev': 'Europe/Kyiv',
  'Pacific/Truk': 'Pacific/Chuuk',
  'Pacific/Enderbury': 'Pacific/Kanton',
  'Pacific/Ponape': 'Pacific/Pohnpei',
};

const UTC_NAMES = new Set(['utc', 'etc/utc', 'etc/uct', 'uct', 'gmt', 'etc/gmt', 'etc/gmt0', 'etc/gmt+0', 'etc/gmt-0', 'gmt0', 'gmt+0', 'gmt-0', 'etc/greenwich', 'greenwich', 'etc/universal', 'universal', 'etc/zulu', 'zulu']);

const memo = new Map<string, string | undefined>();

/** The stored spelling of the zone `tz` names; undefined when it names none. */
export function canonicalTimeZone(tz: string): string | undefined {
  if (memo.has(tz)) return memo.get(tz);
  const canonical = resolve(tz);
  if (memo.size > 10_000) memo.clear();
  memo.set(tz, canonical);
  return canonical;
}

function resolve(tz: string): string | undefined {
  if (tz.trim() !== tz || tz.length === 0) return undefined;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
  if (UTC_NAMES.has(resolved.toLowerCase())) return 'UTC';
  return RETIRED[resolved] ?? resolved;
}

export function isTimeZone(tz: string): boolean {
  return canonicalTimeZone(tz) !== undefined;
}

/**
 * A zone's name as people are shown it. The tzdb's fixed-offset zones keep
 * POSIX's inverted sign: `Etc/GMT+5` is five hours BEHIND UTC (New York's
 * winter), so read as written it says the opposite of what it is. Those are
 * shown with the offset they are, `Etc/GMT+5 (UTC−05:00)`; every other name
 * is shown as it is stored.
 */
export function zoneLabel(tz: string): string {
  const m = /^Etc\/GMT([+-])(\d{1,2})$/.exec(tz);
  if (!m) return tz;
  const behind = m[1] === '+';
  return `${tz} (UTC${behind ? '−' : '+'}${m[2]!.padStart(2, '0')}:00)`;
}

/**
 * Why `tz` names no zone, for the error that refuses it (the field and the
 * value are named by the caller): a fixed offset typed as a zone (`utc+2`,
 * `+05:45`) is told how the tzdb spells one, with its inverted sign.
 */
export function timeZoneProblem(tz: string): string | undefined {
  if (isTimeZone(tz)) return undefined;
  if (tz.trim() === '') return 'empty: name an IANA time zone, such as "Asia/Kathmandu" or "UTC"';
  if (/^etc\/gmt/i.test(tz)) return 'not an IANA time zone: the Etc/GMT zones run from "Etc/GMT-14" (UTC+14) to "Etc/GMT+12" (UTC−12), their sign inverted; better, name the place';
  const offset = /^(?:utc|gmt)?\s*([+−-])\s*(\d{1,2})(?::?(\d{2}))?$/i.exec(tz.trim());
  if (offset) {
    const ahead = offset[1] === '+';
    const hours = Number(offset[2]);
    const minutes = Number(offset[3] ?? 0);
    const whole = minutes === 0 && (ahead ? hours <= 14 : hours <= 12);
    const etc = whole ? `, or "Etc/GMT${ahead ? '-' : '+'}${hours}" for a fixed UTC${ahead ? '+' : '−'}${hours} (the Etc/GMT sign is inverted)` : '';
    return `not an IANA time zone: an offset is not a zone (it has no DST, and cron cannot read it); name the place, such as "Asia/Kathmandu" or "America/St_Johns"${etc}`;
  }
  const meant = zoneMeant(tz.trim());
  return `not an IANA time zone (such as "Europe/Berlin" or "UTC")${meant ? `; did you mean "${meant}"?` : ''}`;
}

/** The zone `typed` is a typo of (`Europe/Berln`), by its stored name, if any. */
function zoneMeant(typed: string): string | undefined {
  // Intl's names and the tzdb's (Node 20 lists Asia/Calcutta, stored as Asia/Kolkata), each as stored.
  zoneNames ??= [...new Set(Intl.supportedValuesOf('timeZone').flatMap((z) => [z, canonicalTimeZone(z) ?? z]))];
  const upper = zoneNames.map((z) => z.toUpperCase());
  const [hit] = misspelledNames([typed.toUpperCase()], upper);
  const zone = hit ? zoneNames[upper.indexOf(hit.meant)] : undefined;
  return zone === undefined ? undefined : (canonicalTimeZone(zone) ?? zone);
}
let zoneNames: string[] | undefined;
