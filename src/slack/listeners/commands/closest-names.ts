import { editDistanceWithin, NAME_COMPARISON_BUDGET } from '../../../domain/names.js';

/**
 * Up to `limit` candidates nearest to `wanted`: substrings first, then by
 * edit distance, within `budget` character comparisons (NAME_COMPARISON_BUDGET). Pure.
 */
export function closestNames(wanted: string, candidates: string[], limit = 3, budget = NAME_COMPARISON_BUDGET): string[] {
  const w = wanted.toLowerCase();
  const cutoff = Math.max(2, Math.floor(w.length / 2));
  let left = budget;
  const scored = candidates.flatMap((c) => {
    const l = c.toLowerCase();
    if (l.includes(w) || w.includes(l)) return [{ c, score: 0 }];
    // Lengths too far apart cost nothing (editDistanceWithin); the rest spend the budget.
    if (Math.abs(w.length - l.length) > cutoff) return [];
    if (left < w.length * l.length) return [];
    left -= w.length * l.length;
    const score = editDistanceWithin(w, l, cutoff);
    return score === undefined ? [] : [{ c, score }];
  });
  return scored
    .sort((a, b) => a.score - b.score || a.c.localeCompare(b.c))
    .slice(0, limit)
    .map((s) => s.c);
}
