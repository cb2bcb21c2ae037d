/**
 * Keyset paging for the read API: callers fetch `limit + 1` rows newest id
 * first; the extra row only says there is more, and the page's last id is the
 * cursor for the next one (`before`).
 */
export function cursorPage<R extends { id: number }>(rows: R[], limit: number): { page: R[]; next: number | null } {
  const page = rows.slice(0, limit);
  return { page, next: rows.length > limit ? page[page.length - 1]!.id : null };
}
