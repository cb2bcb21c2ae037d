/**
 * How far apart two names are, and which names look like a misspelling of a
 * known one: `/scheduler` suggestions and the start-up's warning about
 * environment variables nobody reads (SLACK_BOT_TOKN). Pure.
 */

/**
 * Edit distance counting an insertion, a deletion, a substitution or a swap
 * of two neighbours (PROT for PORT) as one edit (optimal string alignment).
 */
export function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      row.push(d);
    }
    before = prev;
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The edit distance of two names when it is at most `max`, else undefined.
 * Names whose lengths differ by more than `max` are never that close, and
 * their characters are not compared: the comparison costs the product of
 * the two lengths, so a `/scheduler run` naming 4,000 characters, matched
 * against every workflow in the channel's scope (2,000 of them: 4 seconds),
 * held the whole bot (pings, the API, the scheduler) for that long, and any
 * member of a linked channel could send it again and again.
 */
export function editDistanceWithin(a: string, b: string, max: number): number | undefined {
  if (Math.abs(a.length - b.length) > max) return undefined;
  const distance = editDistance(a, b);
  return distance <= max ? distance : undefined;
}

/**
 * How many character comparisons (the product of two names' lengths) one
 * search for the closest names may spend, about 0.1 s: names within reach
 * of each other's length can still be long (200 characters, as many as a
 * tenant likes), and 2,000 of them against a 300-character name took 2.6
 * seconds of the bot's one thread. Past it the names left are not compared
 * (a name containing, or contained in, the one asked for still is).
 */
export const NAME_COMPARISON_BUDGET = 2_000_000;

export interface Misspelling {
  name: string;
  meant: string;
}

/**
 * The given names that are not known but are within a typo of one that is:
 * another case (`Port`), or one character off (two for names of 10 or more
 * characters, so HOME is not taken for HOST). Names the environment holds
 * for other programs are far enough from ours to pass unremarked.
 */
export function misspelledNames(given: Iterable<string>, known: readonly string[]): Misspelling[] {
  const exact = new Set(known);
  const out: Misspelling[] = [];
  for (const name of given) {
    if (exact.has(name)) continue;
    const upper = name.toUpperCase();
    let best: { meant: string; distance: number } | undefined;
    for (const k of known) {
      const allowed = k.length >= 10 ? 2 : 1;
      // Within a typo or not compared: a 250,000-character unknown field of an API body took 1.5 s against a schema's fields.
      const distance = editDistanceWithin(upper, k, allowed);
      if (distance !== undefined && (!best || distance < best.distance)) best = { meant: k, distance };
    }
    if (best) out.push({ name, meant: best.meant });
  }
  return out;
}
