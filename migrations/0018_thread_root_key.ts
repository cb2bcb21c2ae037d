import { type Kysely, sql } from 'kysely';

/**
 * Which outbox row posted a thread's root: the key its metadata carries. A row
 * that posts its alert's root and then a reply of its own under it (a page,
 * or outliving a storm) is delivered in two messages; on its next attempt the
 * sender must know the root is its own, so that it posts (or looks for) only
 * the reply, which carries a key of its own (src/domain/events.ts
 * ownReplyKey). Existing threads take the key of the sent row whose result
 * names their root.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table alert_threads add column root_key text;
    update alert_threads t set root_key = (
      select n.idempotency_key from notifications n
      where n.alert_id = t.alert_id and n.destination = t.destination and n.status = 'sent' and n.result ->> 'ts' = t.root_ts
      order by n.id limit 1
    );
  `.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
