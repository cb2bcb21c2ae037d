import { editDistanceWithin } from '../../../domain/names.js';

/** Up to `limit` candidates nearest to `wanted`: substrings first, then by edit distance. Pure. */
export function closestNames(wanted: string, candidates: string[], limit = 3): string[] {
  const w = wanted.toLowerCase();
  const cutoff = Math.max(2, Math.floor(w.length / 2));
  const scored = candidates.flatMap((c) => {
    const l = c.toLowerCase();
    const score = l.includes(w) || w.includes(l) ? 0 : editDistanceWithin(w, l, cutoff);
    return score === undefined ? [] : [{ c, score }];
  });
  return scored
    .sort((a, b) => a.score - b.score || a.c.localeCompare(b.c))
    .slice(0, limit)
    .map((s) => s.c);
}
