import { OPERATOR_ONLY_EVENT_KINDS } from '../domain/events.js';
import { cursorPage } from '../ledger/cursor-page.js';
import type { Db } from '../db/connect.js';
import { shownDestination } from '../domain/destination-outage.js';
import type { Scope } from '../ledger/alert-queries.js';
import { alertDependencyDetail } from '../ledger/dependency-state.js';
import { platformOnlyDestinations, type RoutingConfig } from '../ledger/destinations.js';
import { eventDataFor } from '../domain/pagerduty-incident.js';

export interface AlertFilter {
  status?: 'open' | 'resolved';
  /** Alerts opened at or after / before these instants. */
  from?: Date;
  to?: Date;
  before?: number;
  limit: number;
}

/** Alerts newest first, keyset-paginated on the id, within the caller's tenant. */
export async function listAlerts(db: Db, scope: Scope, f: AlertFilter) {
  let q = db
    .selectFrom('alerts as a')
    .innerJoin('workflows as w', 'w.id', 'a.workflowId')
    .select(['a.id', 'w.tenantId as tenant', 'w.name as workflow', 'a.status', 'a.severity', 'a.openedAt', 'a.resolvedAt', 'a.consecutiveFailures', 'a.lastError', 'a.ownerUser', 'a.ownerTeam'])
    .orderBy('a.id', 'desc')
    .limit(f.limit + 1);
  if (scope.tenantId) q = q.where('w.tenantId', '=', scope.tenantId);
  if (f.status) q = q.where('a.status', '=', f.status);
  if (f.from) q = q.where('a.openedAt', '>=', f.from);
  if (f.to) q = q.where('a.openedAt', '<', f.to);
  if (f.before) q = q.where('a.id', '<', f.before);
  const { page, next } = cursorPage(await q.execute(), f.limit);
  return { alerts: page, next };
}

/** A page of an alert's event timeline, oldest first: events after `after` (an event id), at most `limit`. */
export interface EventPage {
  after?: number;
  limit: number;
}

/** The first page when none is asked for: the most the API returns at once, so an alert with fewer events reads as it did before paging. */
export const EVENT_PAGE_MAX = 200;

/**
 * One alert with a page of its event timeline (oldest first; `eventsNext`
 * continues it), who owned it when (the whole handoff history, whatever the
 * page), and where each notification of the page's events stands per
 * destination. Destinations are shown as `shownDestination` has them: never
 * a webhook's URL; a tenant sees its own destinations only, never the
 * platform's (`routing`: where they are). An alert open for months has
 * thousands of events: before paging, every one came back at once.
 */
export async function getAlertDetail(db: Db, scope: Scope, id: number, routing: RoutingConfig = { PLATFORM_CHANNEL: undefined }, page: EventPage = { limit: EVENT_PAGE_MAX }) {
  let q = db.selectFrom('alerts as a').innerJoin('workflows as w', 'w.id', 'a.workflowId').selectAll('a').select(['w.tenantId as tenant', 'w.name as workflow']).where('a.id', '=', id);
  if (scope.tenantId) q = q.where('w.tenantId', '=', scope.tenantId);
  const alert = await q.executeTakeFirst();
  if (!alert) return undefined;
  // A tenant never reads operator-only events (a shared cause names other tenants' workflows), nor their deliveries.
  const hidden = scope.tenantId ? OPERATOR_ONLY_EVENT_KINDS : [];
  const timeline = db
    .selectFrom('alertEvents')
    .select(['id', 'at', 'kind', 'actor', 'data'])
    .where('alertId', '=', id)
    .$if(hidden.length > 0, (q) => q.where('kind', 'not in', hidden))
    .orderBy('id');
  const rows = await timeline
    .$if(page.after !== undefined, (q) => q.where('id', '>', page.after!))
    .limit(page.limit + 1)
    .execute();
  // A tenant token reads the platform's PagerDuty incidents left open as a count, never their key ids.
  const events = rows.slice(0, page.limit).map((e) => (scope.tenantId ? { ...e, data: eventDataFor('tenant', e.data) as typeof e.data } : e));
  const eventsNext = rows.length > page.limit ? String(events[events.length - 1]!.id) : null;
  const handoffs = await timeline.where('kind', '=', 'owner_changed').execute();
  const shown = events.map((e) => e.id);
  // Nor the deliveries to the platform's own destinations: PLATFORM_DESTINATIONS is the operator's, kept like a secret.
  const tenant = scope.tenantId ? await db.selectFrom('tenants').select(['channel', 'destinations']).where('id', '=', alert.tenant).executeTakeFirst() : undefined;
  const platformOnly = tenant ? platformOnlyDestinations(tenant, routing) : new Set<string>();
  const notifications =
    shown.length === 0
      ? []
      : await db
          .selectFrom('notifications')
          .select(['eventId', 'destination', 'status', 'attempts', 'lastError', 'createdAt', 'sentAt', 'nextAttemptAt'])
          .where('alertId', '=', id)
          .where('eventId', 'in', shown)
          .orderBy('id')
          .execute();
  // pagersAtOpening: destination ids of pagers, the platform's among them (PLATFORM_DESTINATIONS is kept like a secret).
  const { policy: _policy, upstreamAlertId: _upstream, pagersAtOpening: _pagers, ...fields } = alert;
  return {
    ...fields,
    dependency: await alertDependencyDetail(db, alert, scope.tenantId),
    events,
    eventsNext,
    ownerHistory: handoffs.map((e) => ({ at: e.at, actor: e.actor, ...e.data })),
    notifications: notifications.filter((n) => !platformOnly.has(n.destination)).map((n) => ({ ...n, destination: shownDestination(n.destination), nextAttemptAt: n.status === 'pending' || n.status === 'sending' ? n.nextAttemptAt : null })),
  };
}
