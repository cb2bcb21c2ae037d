import type { Db } from '../db/connect.js';

/**
 * The database's destination id key: random, made once by migration 0019 and
 * the same for every replica and every restart, so a webhook destination
 * keeps its outbox id (src/config/destination-schema.ts, webhookDestinationId)
 * for as long as its URL does. It lives beside the data it names: a copy of
 * the database keeps its ids.
 */
export async function loadDestinationIdKey(db: Db): Promise<string> {
  const row = await db.selectFrom('instanceKeys').select('value').where('name', '=', 'destination_id').executeTakeFirst();
  if (!row) throw new Error('no destination id key in instance_keys: run the migrations (migration 0019 makes it)');
  return row.value;
}

/** The configuration with the database's destination id key, for everything that routes or delivers. */
export async function withDestinationIdKey<C extends object>(db: Db, config: C): Promise<C & { destinationIdKey: string }> {
  return { ...config, destinationIdKey: await loadDestinationIdKey(db) };
}
