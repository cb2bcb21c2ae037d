import { sql, type Transaction } from 'kysely';
import type { Config } from '../config/env.js';
import type { Database } from '../db/schema.js';
import { DEFAULT_STORM_RULE, STORM_OPENING_SQL, stormDecision, type StormRule } from '../domain/storm.js';
import { prepared } from '../db/prepared.js';

export type StormConfig = Partial<Pick<Config, 'STORM_MIN_ALERTS' | 'STORM_WINDOW_SECONDS'>>;

export function stormRuleOf(config: StormConfig): StormRule {
  return { minAlerts: config.STORM_MIN_ALERTS ?? DEFAULT_STORM_RULE.minAlerts, windowSeconds: config.STORM_WINDOW_SECONDS ?? DEFAULT_STORM_RULE.windowSeconds };
}

/** An opening that counts toward a storm and may be taken in (src/domain/storm.ts countsTowardStorm): not a shadow alert's. */
const countsTowardStorm = sql.raw(STORM_OPENING_SQL);

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
 *
 * Three statements however many destinations the batch opened alerts in
 * (issue 18; one destination at a time took three to seven each): the locks,
 * then (a statement of its own, so its snapshot is taken after them) every
 * destination's active storm and openings in the window, then, for the
 * destinations that storm, one statement that starts the storms, takes the
 * openings in and records when each storm last grew.
 */
export async function claimStorms(trx: Transaction<Database>, destinations: string[], now: Date, rule: StormRule): Promise<void> {
  if (rule.minAlerts <= 0) return;
  const channels = [...new Set(destinations)].filter(stormsApplyTo).sort();
  if (channels.length === 0) return;
  const since = new Date(now.getTime() - rule.windowSeconds * 1000);
  // unnest returns the array in its order: the locks are taken in sorted order, one after the other.
  await sql`${prepared}select count(pg_advisory_xact_lock(${STORM_LOCK_SPACE}, hashtext(d))) from unnest(${channels}::text[]) as d`.execute(trx);
  const { rows } = await sql<{ destination: string; stormId: number | null; lastJoinedAt: Date | null; openings: number }>`${prepared}
    select d.destination, s.id as storm_id, s.last_joined_at,
      (select count(*)::int from notifications n join alert_events e on e.id = n.event_id
       where n.destination = d.destination and e.kind = 'opened' and n.created_at > ${since} and ${countsTowardStorm}) as openings
    from unnest(${channels}::text[]) as d(destination)
    left join storms s on s.destination = d.destination and s.ended_at is null
  `.execute(trx);
  const storming = rows.flatMap((r) => {
    const storm = r.stormId !== null ? { id: Number(r.stormId), lastJoinedAt: r.lastJoinedAt! } : null;
    const decision = stormDecision({ openingsInWindow: r.openings, storm, now, rule });
    return decision.kind === 'root' ? [] : [{ destination: r.destination, storm_id: storm?.id ?? null, channel: r.destination.slice(r.destination.indexOf(':') + 1) }];
  });
  if (storming.length > 0) await joinStorms(trx, storming, since, now);
}

/**
 * One statement: starts the storms that do not exist yet, takes in each
 * destination's pending openings of the window that have no root of their
 * own (locked), and moves an existing storm's `last_joined_at` when it took
 * any in (a new storm starts with it).
 */
async function joinStorms(trx: Transaction<Database>, storming: { destination: string; storm_id: number | null; channel: string }[], since: Date, now: Date): Promise<void> {
  await sql`${prepared}
    with j as (
      select * from jsonb_to_recordset(${JSON.stringify(storming)}::jsonb) as j(destination text, storm_id bigint, channel text)
    ), started as (
      insert into storms (destination, channel, started_at, last_joined_at)
      select j.destination, j.channel, ${now}, ${now} from j where j.storm_id is null order by j.destination
      returning id, destination
    ), storm as (
      select j.destination, j.storm_id as id, false as new from j where j.storm_id is not null
      union all
      select started.destination, started.id, true from started
    ), taken as (
      select n.alert_id, n.destination from notifications n join alert_events e on e.id = n.event_id
      where n.destination in (select destination from j) and e.kind = 'opened' and n.created_at > ${since} and n.status = 'pending' and ${countsTowardStorm}
        and not exists (select 1 from alert_threads t where t.alert_id = n.alert_id and t.destination = n.destination)
      for update of n
    ), members as (
      insert into storm_alerts (storm_id, alert_id, destination, joined_at)
      select storm.id, taken.alert_id, taken.destination, ${now} from taken join storm on storm.destination = taken.destination
      on conflict (alert_id, destination) do nothing
    )
    update storms set last_joined_at = ${now}
    from storm where storms.id = storm.id and not storm.new and exists (select 1 from taken where taken.destination = storm.destination)
  `.execute(trx);
}
