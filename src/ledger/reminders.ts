import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * Of `alertIds` (owned), the reminders to the current owner recorded since
 * they took the alert or last acted on it (an event with them as actor):
 * counted from the thread's history, never a stored counter.
 */
export async function unansweredReminders(trx: Transaction<Database>, alertIds: number[]): Promise<Map<number, number>> {
  if (alertIds.length === 0) return new Map();
  const { rows } = await sql<{ id: number; n: number }>`
    select a.id, count(e.id)::int as n from alerts a
    join alert_events e on e.alert_id = a.id and e.kind = 'reminder' and e.data->>'about' = 'owned' and e.data->>'ownerUser' = a.owner_user
    where a.id = any(${alertIds}::bigint[])
      and e.at > greatest(a.acknowledged_at, (select max(o.at) from alert_events o where o.alert_id = a.id and o.actor = a.owner_user))
    group by a.id
  `.execute(trx);
  return new Map(rows.map((r) => [Number(r.id), r.n]));
}
