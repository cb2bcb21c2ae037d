const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "90s", "30m", "4h", "1d", "1h30m" → milliseconds; undefined when it is not such a duration (or is zero). */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^(\d+[smhd])+$/.test(trimmed)) return undefined;
  let ms = 0;
  for (const [, n, unit] of trimmed.matchAll(/(\d+)([smhd])/g)) ms += Number(n) * UNIT_MS[unit!]!;
  return ms > 0 ? ms : undefined;
}
