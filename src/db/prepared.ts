import { createHash } from 'node:crypto';
import { sql } from 'kysely';

/**
 * Named prepared statements for the hot statements (issue 18): a statement
 * whose text starts with `prepared` (put it first: sql`${prepared}select …`)
 * is sent by `pg` under a name derived from its text, so each connection has
 * the server parse it once and afterwards only binds and executes it (the
 * server may then also reuse its plan). Only for statements whose text never
 * varies (every value a parameter: never a list spelt into the text, such as
 * kysely's `in (…)`): each distinct text is one more statement kept on every
 * connection.
 */
export const PREPARED_MARK = '/* prepared */ ';
export const prepared = sql.raw(PREPARED_MARK);

const names = new Map<string, string>();

/** The name a marked text is prepared under (a hash of it: the same on every connection and process); undefined when unmarked. */
export function preparedName(text: string): string | undefined {
  if (!text.startsWith(PREPARED_MARK)) return undefined;
  let name = names.get(text);
  if (!name) {
    name = `sb_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    // Marked texts are a handful of constants; the cap only guards against a marked text that varies.
    if (names.size < 1_000) names.set(text, name);
  }
  return name;
}

/**
 * A prepared statement whose result columns changed under it (a migration
 * added a column to a table it reads with `*`): PostgreSQL refuses to run it
 * again on that connection, which then prepares its statements afresh
 * (src/db/connect.ts). The statement that hit it fails, and its transaction
 * with it: the loop takes the batch again.
 */
export function isStalePreparedStatement(error: unknown): boolean {
  return error instanceof Error && (error as { code?: string }).code === '0A000' && error.message.includes('cached plan must not change result type');
}
