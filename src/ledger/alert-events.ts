import type { Transaction } from 'kysely';
import type { Alert, AlertEvent, Database, Tenant } from '../db/schema.js';
import { sql } from 'kysely';
import { opensIncident, unresolvedIncidents, type UnresolvedIncident } from '../domain/pagerduty-incident.js';
import { isNotifiedKind, QUIET_EVENT_KINDS, shadowEventData, type AlertEventKind } from '../domain/events.js';
import { heldBySilence, heldReleases, silenceState, summariseHeld, type HeldSummary } from '../domain/silence.js';
import { countsTowardStorm } from '../domain/storm.js';
import { routesFor, shouldRoute, type Route, type RoutingConfig } from './destinations.js';
import { provisionalAlertId, writeAlertsAndEvents, type AlertWrites, type EventRow, type NotificationRow } from './event-writes.js';
import { claimStorms, stormRuleOf, type StormConfig } from './storm-claims.js';

export const NOTIFICATIONS_CHANNEL = 'scheduler_notifications';

export interface EventInput {
  /** The alert as it stands after the change this event records. */
  alert: Alert;
  tenant: Pick<Tenant, 'channel'>;
  kind: AlertEventKind;
  actor?: string | null;
  data: Record<string, unknown>;
  now: Date;
  /** PLATFORM_DESTINATIONS and the storm rule are optional so callers that only know the platform channel keep working. */
  config: RoutingConfig & StormConfig;
  /** Told only to these destinations (a storm's end is told in one channel, a shared cause on the platform channel only). */
  onlyDestinations?: readonly string[];
}

/**
 * Records one alert event and, in the same transaction, its outbox rows: one
 * per destination for a notified kind, and quiet ones (data.quiet = true; the
 * root is re-rendered, no reply) for failure_recorded / healthy_streak. While
 * the alert is silenced rows are written `held`. Wakes the senders via NOTIFY,
 * which Postgres delivers only at commit.
 */
export async function recordAlertEvent(trx: Transaction<Database>, input: EventInput): Promise<AlertEvent> {
  return (await recordAlertEvents(trx, [input]))[0]!;
}

/**
 * recordAlertEvent for many events at once: one statement writes them all
 * with their outbox rows, after three that read the routing (none when the
 * caller knows it: the evaluator records a whole poller batch's events, and
 * its alert rows, this way). Events are
 * recorded in the given order, so their ids, and each thread's delivery
 * order, follow it; an earlier event's rows count as "heard" for a later
 * event of the same alert, exactly as if they had been recorded one by one.
 */
export async function recordAlertEvents(
  trx: Transaction<Database>,
  inputs: EventInput[],
  /**
   * For the evaluator, which has read and locked all of it already: the routing facts (no statement
   * to read them) and its alert rows, written by the same statement as the events.
   */
  known: { routing?: RoutingFacts; alerts?: AlertWrites } = {},
): Promise<AlertEvent[]> {
  const given = known.alerts ?? { opening: [], changed: [] };
  if (inputs.length === 0 && given.opening.length + given.changed.length === 0) return [];
  const quiet = (i: EventInput) => (QUIET_EVENT_KINDS as readonly string[]).includes(i.kind);
  const router = routerOf(known.routing ?? (await loadRoutingFacts(trx, inputs.map((i) => i.alert))));
  const { alerts, later } = pagersAtOpening(inputs, given, router);
  const events: EventRow[] = inputs.map((i) => ({
    alertId: i.alert.id,
    at: i.now,
    kind: i.kind,
    actor: i.actor ?? null,
    data: router.shadow(i.alert) ? shadowEventData(quiet(i) ? { ...i.data, quiet: true } : i.data) : quiet(i) ? { ...i.data, quiet: true } : i.data,
    policyVersion: router.policyVersion(i.alert),
  }));
  const notifications: NotificationRow[] = [];
  let wake = false;
  inputs.forEach((input, event) => {
    if (!quiet(input) && !isNotifiedKind(input.kind)) return;
    const destinations = router.route(input);
    const unresolved = router.unresolved(input);
    // The thread says which incident stays open (a note in the recovery reply), naming the key by its id only.
    if (unresolved.length > 0) events[event]!.data = { ...events[event]!.data, unresolvedIncidents: unresolved };
    if (destinations.length === 0) return;
    const held = silenceState(input.alert, input.now).silenced && heldBySilence(input.kind, input.data);
    wake ||= !held;
    for (const destination of destinations) {
      router.heard(input.alert.id, destination);
      notifications.push({ event, destination, status: held ? 'held' : 'pending', at: input.now });
    }
  });
  const written = await writeAlertsAndEvents(trx, alerts, { events, notifications, wake, channel: NOTIFICATIONS_CHANNEL });
  await recordPagersAtOpening(trx, later.map(({ event, pagers }) => ({ alert_id: written[event]!.alertId, pagers })));
  // Openings may be part of a storm in their channel: decided here, in the transaction that records them.
  const openings = notifications.filter((n) => n.status === 'pending' && inputs[n.event]!.kind === 'opened' && countsTowardStorm(events[n.event]!.data));
  if (openings.length > 0) await claimStorms(trx, openings.map((n) => n.destination), inputs[0]!.now, stormRuleOf(inputs[0]!.config));
  return written;
}

const PAGER_OPENINGS: readonly AlertEventKind[] = ['opened', 'went_live'];

/**
 * The PagerDuty keys configured when each alert opened (or went live: added to those of its opening), kept on
 * the alert's row for `opensIncident`: an alert this batch opens gets them in the statement that inserts it
 * (the evaluator's batch stays the statements it is); an alert inserted before its opening event (a missed
 * deadline's, a went-live shadow alert) gets them from one more statement, `recordPagersAtOpening`.
 */
function pagersAtOpening(inputs: EventInput[], given: AlertWrites, router: ReturnType<typeof routerOf>) {
  const later: { event: number; pagers: string[] }[] = [];
  const inserted = new Map<number, string[]>();
  inputs.forEach((input, event) => {
    if (!PAGER_OPENINGS.includes(input.kind)) return;
    const pagers = router.pagers(input);
    if (given.opening.some((o) => provisionalAlertId(o.workflowId) === input.alert.id)) inserted.set(input.alert.id, pagers);
    else later.push({ event, pagers });
  });
  const opening = given.opening.map((o) => {
    const pagers = inserted.get(provisionalAlertId(o.workflowId));
    return pagers ? { ...o, row: { ...o.row, pagers_at_opening: pagers } } : o;
  });
  return { alerts: { ...given, opening }, later };
}

/** Adds the keys of `later` openings to their alerts' rows (written ids come in event order: writeAlertsAndEvents). No statement without. */
async function recordPagersAtOpening(trx: Transaction<Database>, openings: { alert_id: number; pagers: string[] }[]): Promise<void> {
  if (openings.length === 0) return;
  await sql`
    update alerts a set pagers_at_opening = array(select distinct unnest(coalesce(a.pagers_at_opening, '{}') || v.pagers))
    from jsonb_to_recordset(${JSON.stringify(openings)}::jsonb) as v(alert_id bigint, pagers text[])
    where a.id = v.alert_id
  `.execute(trx);
}

/** What routing reads: each alert's workflow and tenant settings, and the destinations that have heard each alert. */
export interface RoutingFacts {
  workflows: { id: number; destinations: unknown; policyVersion: number | null; shadow: boolean; tenantShadow: boolean }[];
  /** A destination with a row for the alert that was not skipped has been told the alert exists. */
  heard: { alertId: number; destination: string }[];
  /** The PagerDuty incidents each alert has opened: the routing key's destination id and the dedup_key its trigger was sent with. */
  incidents: ({ alertId: number } & UnresolvedIncident)[];
}

/**
 * The tenant's configured destinations are read in the event's transaction,
 * so every caller routes the same way whatever part of the tenant it loaded.
 */
async function loadRoutingFacts(trx: Transaction<Database>, alerts: Pick<Alert, 'id' | 'workflowId'>[]): Promise<RoutingFacts> {
  const workflowIds = [...new Set(alerts.map((a) => a.workflowId))];
  const alertIds = [...new Set(alerts.map((a) => a.id))];
  const workflows = await trx
    .selectFrom('workflows')
    .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
    .select(['workflows.id', 'tenants.destinations', 'workflows.policyVersion', 'workflows.shadow', 'tenants.shadow as tenantShadow'])
    .where('workflows.id', 'in', workflowIds)
    .execute();
  const heard = await trx
    .selectFrom('notifications')
    .select(['alertId', 'destination'])
    .distinct()
    .where('alertId', 'in', alertIds)
    .where('status', '!=', 'skipped')
    .execute();
  const incidents = await trx
    .selectFrom('notifications')
    .select(['alertId', 'destination', sql<string>`result->>'dedupKey'`.as('dedupKey'), sql<'tenant' | 'platform' | null>`result->>'configuredBy'`.as('configuredBy')])
    .distinct()
    .where('alertId', 'in', alertIds)
    .where('status', '=', 'sent')
    .where('destination', 'like', 'pagerduty:%')
    .where(sql<boolean>`result ? 'dedupKey'`)
    .execute();
  return { workflows, heard, incidents: incidents.map(({ configuredBy, ...i }) => ({ ...i, ...(configuredBy ? { configuredBy } : {}) })) };
}

/** The destinations each event goes to under each one's routing rules. */
function routerOf(facts: RoutingFacts) {
  const workflowOf = new Map(facts.workflows.map((s) => [s.id, s]));
  const heard = new Set(facts.heard.map((r) => `${r.alertId}\u0000${r.destination}`));
  const orphans = new Map<EventInput, UnresolvedIncident[]>();
  return {
    /** The PagerDuty incidents a resolve routed by `route` cannot reach: their routing key is configured nowhere now. */
    unresolved(input: EventInput): UnresolvedIncident[] {
      return orphans.get(input) ?? [];
    },
    /** The version an event is decided under: the workflow's current one (evaluation uses the current policy). */
    policyVersion(alert: Pick<Alert, 'workflowId'> & { policyVersion?: number | null }): number | null {
      return workflowOf.get(alert.workflowId)?.policyVersion ?? alert.policyVersion ?? null;
    },
    route(input: EventInput): string[] {
      const wf = workflowOf.get(input.alert.workflowId);
      const tenant = { channel: input.tenant.channel, destinations: wf?.destinations };
      const shadow = !!(wf?.shadow || wf?.tenantShadow);
      let routes = routesFor({ ...tenant, shadow }, input.config);
      // An alert put in shadow while open: the destinations told of it before still hear how it ended
      // (its thread closes, a PagerDuty incident resolves), as a resolution is always delivered.
      if (shadow && input.kind === 'resolved') {
        const toldBefore = routesFor({ ...tenant, shadow: false }, input.config).filter((r) => heard.has(`${input.alert.id}\u0000${r.id}`) && !routes.some((x) => x.id === r.id));
        routes = [...routes, ...toldBefore];
      }
      const update = (input.data as { update?: unknown }).update === true;
      // Its resolve is still written for a key no longer configured (never sent to another one): delivered if the key
      // comes back before it is sent (as `retired`), else it goes dead naming the incident left open.
      const unresolved = input.kind === 'resolved' ? unresolvedIncidents(facts.incidents.filter((i) => i.alertId === input.alert.id), routes.map((r) => r.id)) : [];
      orphans.set(input, unresolved);
      const told = (r: Route) => heard.has(`${input.alert.id}\u0000${r.id}`);
      // A key rotated in beside the retired key that holds the alert's incident opens no second one (pagerduty-incident.ts).
      const retiredHolds = routes.some((r) => r.retired && told(r));
      return routes
        .filter((r) => !input.onlyDestinations || input.onlyDestinations.includes(r.id))
        .filter((r) => shouldRoute(r, input.kind, input.alert.severity, told(r), update))
        .filter((r) => r.kind !== 'pagerduty' || told(r) || opensIncident(r.id, input.alert.pagersAtOpening, retiredHolds))
        .map((r) => r.id)
        .concat(unresolved.map((i) => i.destination));
    },
    /** The PagerDuty keys (destination ids) configured for the alert's tenant now, retired ones aside, shadow or not. */
    pagers(input: EventInput): string[] {
      const wf = workflowOf.get(input.alert.workflowId);
      return routesFor({ channel: input.tenant.channel, destinations: wf?.destinations, shadow: false }, input.config)
        .filter((r) => r.kind === 'pagerduty' && !r.retired)
        .map((r) => r.id);
    },
    /** Whether the alert's workflow (or its tenant) is in shadow: its events page nobody. */
    shadow(alert: Pick<Alert, 'workflowId'>): boolean {
      const wf = workflowOf.get(alert.workflowId);
      return !!(wf?.shadow || wf?.tenantShadow);
    },
    heard(alertId: number, destination: string) {
      heard.add(`${alertId}\u0000${destination}`);
    },
  };
}

/**
 * Ends the hold on an alert's notifications: held rows become `skipped` and
 * the summary of what they said is returned, for the one event that replaces them;
 * except, when the silence ends on an open alert, a destination's held opening
 * (it has not otherwise heard of the alert) and a pager's held acknowledgement
 * (`heldReleases`, src/domain/silence.ts), which are delivered.
 */
export async function releaseHeldNotifications(trx: Transaction<Database>, alert: Alert): Promise<HeldSummary> {
  const held = await trx
    .selectFrom('notifications as n')
    .innerJoin('alertEvents as e', 'e.id', 'n.eventId')
    .select(['n.id', 'n.destination', 'e.kind', 'e.actor', 'e.data'])
    .where('n.alertId', '=', alert.id)
    .where('n.status', '=', 'held')
    .execute();
  const heard = held.length
    ? await trx.selectFrom('notifications').select('destination').distinct().where('alertId', '=', alert.id).where('status', 'not in', ['held', 'skipped']).execute()
    : [];
  const released = heldReleases(held, new Set(heard.map((h) => h.destination)), alert.status === 'open');
  if (released.length > 0) await trx.updateTable('notifications').set({ status: 'pending' }).where('id', 'in', released).where('status', '=', 'held').execute();
  const rows = await trx
    .updateTable('notifications')
    .set({ status: 'skipped' })
    .where('alertId', '=', alert.id)
    .where('status', '=', 'held')
    .returning(['eventId'])
    .execute();
  const eventIds = [...new Set(rows.map((r) => r.eventId))];
  const events = eventIds.length ? await trx.selectFrom('alertEvents').select(['kind']).where('id', 'in', eventIds).execute() : [];
  return summariseHeld(
    events.map((e) => e.kind),
    alert,
  );
}
