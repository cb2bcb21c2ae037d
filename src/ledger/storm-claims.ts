import { sql, type Transaction } from 'kysely';
import type { Config } from '../config/env.js';
import type { Database } from '../db/schema.js';
import { DEFAULT_STORM_RULE, stormDecision, type StormRule } from '../domain/storm.js';

export type StormConfig = Partial<Pick<Config, 'STORM_MIN_ALERTS' | 'STORM_WINDOW_SECONDS'>>;

export function stormRuleOf(config: StormConfig): StormRule {
  return { minAlerts: config.STORM_MIN_ALERTS ?? DEFAULT_STORM_RULE.minAlerts, windowSeconds: config.STORM_WINDOW_SECONDS ?? DEFAULT_STORM_RULE.windowSeconds };
}

/** Separates this lock's keys from any other advisory lock (an arbitrary constant). */
const STORM_LOCK_SPACE = 16_0013;

/** Only a Slack channel has a storm message; other destinations hear each alert (docs/alerts.md "Storms"). */
export function stormsApplyTo(destination: string): boolean {
  return destination.startsWith('slack:');
}

/**
 * Decides, in the transaction that records alert openings, whether the
 * openings just written for each destination are part of a storm there, and
 * records the membership. A transaction-scoped advisory lock per destination
 * (taken in sorted order, so two batches never wait on each other in a cycle)
 * makes the decision once across replicas: the second decider waits, then
 * reads the first one's committed openings and storm. The partial unique
 * index (one active storm per destination) backs it up.
 *
 * Taking in an opening means: its alert has no root of its own in that
 * channel yet, and its opening row is still pending (locked here, so a
 * sender cannot claim it meanwhile; a row already being sent keeps its root).
 */
export async function claimStorms(trx: Transaction<Database>, destinations: string[], now: Date, rule: StormRule): Promise<void> {
  if (rule.minAlerts <= 0) return;
  const since = new Date(now.getTime() - rule.windowSeconds * 1000);
  for (const destination of [...new Set(destinations)].filter(stormsApplyTo).sort()) {
    await sql`select pg_advisory_xact_lock(${STORM_LOCK_SPACE}, hashtext(${destination}))`.execute(trx);
    const storm = await trx.selectFrom('storms').select(['id', 'lastJoinedAt']).where('destination', '=', destination).where('endedAt', 'is', null).executeTakeFirst();
    const counted = await sql<{ n: number }>`
      select count(*)::int as n from notifications n join alert_events e on e.id = n.event_id
      where n.destination = ${destination} and e.kind = 'opened' and n.created_at > ${since}`.execute(trx);
    const decision = stormDecision({ openingsInWindow: counted.rows[0]?.n ?? 0, storm: storm ?? null, now, rule });
    if (decision.kind === 'root') continue;
    const stormId = storm?.id ?? (await startStorm(trx, destination, now));
    const taken = await sql<{ alertId: number }>`
      select n.alert_id from notifications n join alert_events e on e.id = n.event_id
      where n.destination = ${destination} and e.kind = 'opened' and n.created_at > ${since} and n.status = 'pending'
        and not exists (select 1 from alert_threads t where t.alert_id = n.alert_id and t.destination = n.destination)
      for update of n`.execute(trx);
    if (taken.rows.length === 0) continue;
    await trx
      .insertInto('stormAlerts')
      .values(taken.rows.map((r) => ({ stormId, alertId: Number(r.alertId), destination, joinedAt: now })))
      .onConflict((oc) => oc.columns(['alertId', 'destination']).doNothing())
      .execute();
    await trx.updateTable('storms').set({ lastJoinedAt: now }).where('id', '=', stormId).execute();
  }
}

async function startStorm(trx: Transaction<Database>, destination: string, now: Date): Promise<number> {
  const channel = destination.slice(destination.indexOf(':') + 1);
  const row = await trx.insertInto('storms').values({ destination, channel, startedAt: now, lastJoinedAt: now }).returning('id').executeTakeFirstOrThrow();
  return Number(row.id);
}
