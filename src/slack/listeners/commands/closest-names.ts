/** Up to `limit` candidates nearest to `wanted`: substrings first, then by edit distance. Pure. */
export function closestNames(wanted: string, candidates: string[], limit = 3): string[] {
  const w = wanted.toLowerCase();
  const scored = candidates.map((c) => {
    const l = c.toLowerCase();
    const score = l.includes(w) || w.includes(l) ? 0 : editDistance(w, l);
    return { c, score };
  });
  const cutoff = Math.max(2, Math.floor(w.length / 2));
  return scored
    .filter((s) => s.score <= cutoff)
    .sort((a, b) => a.score - b.score || a.c.localeCompare(b.c))
    .slice(0, limit)
    .map((s) => s.c);
}

function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}
