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
