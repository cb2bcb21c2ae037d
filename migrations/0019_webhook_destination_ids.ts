import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { webhookDestinationId } from '../src/config/destination-schema.js';

/**
 * Webhook destinations lose their URL from the outbox: a new random key per
 * database (`instance_keys`, name `destination_id`), and every stored
 * `webhook:<URL>` (notifications, with the idempotency key that ends in it,
 * and destination outages) rewritten to `webhook:<host>/<keyed digest>`, the
 * id the engine now routes and delivers by, pending rows included, so an
 * upgrade delivers what it found pending. A row whose URL is no longer
 * configured gets an id nothing matches: it goes dead saying so, as before.
 * The idempotency key of a rewritten row changes with it: a receiver that saw
 * a send whose outcome was unknown sees the resend under the new key.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table instance_keys (
      name text primary key,
      value text not null,
      created_at timestamptz not null default now()
    );
  `.execute(db);
  const key = randomBytes(32).toString('base64url');
  await sql`insert into instance_keys (name, value) values ('destination_id', ${key})`.execute(db);
  const { rows } = await sql<{ destination: string }>`
    select distinct destination from notifications where destination like 'webhook:%'
    union select destination from destination_outages where destination like 'webhook:%'
  `.execute(db);
  const renamed = rows.filter((r) => /^webhook:https?:\/\//i.test(r.destination)).map((r) => ({ old: r.destination, new: webhookDestinationId(r.destination.slice('webhook:'.length), key) }));
  if (renamed.length > 0) {
    // One statement a table (a join on the mapping), not one scan of the outbox per webhook.
    const mapping = sql`jsonb_to_recordset(${JSON.stringify(renamed)}::jsonb) as m(old text, new text)`;
    await sql`
      update notifications n set destination = m.new, idempotency_key = left(n.idempotency_key, length(n.idempotency_key) - length(m.old)) || m.new
      from ${mapping} where n.destination = m.old
    `.execute(db);
    await sql`update destination_outages o set destination = m.new from ${mapping} where o.destination = m.old`.execute(db);
  }
  // Webhook pacing keys were the receiver's origin; they are its host now. A slot is seconds of state: the old ones go.
  await sql`delete from pace_slots where key like 'webhook:%'`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
