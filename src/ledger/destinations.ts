import type { Config } from '../config/env.js';
import { destinationId, resolvedDestinationSchema, type DestinationSpec } from '../config/workflows-file.js';
import type { Severity, Tenant } from '../db/schema.js';
import { isNotifiedKind, QUIET_EVENT_KINDS, type AlertEventKind, type NotifiedEventKind } from '../domain/events.js';

/** One place an alert's events may go, with its routing rules. */
export interface Route {
  /** `kind:target`, as written in `notifications.destination`. */
  id: string;
  kind: string;
  minSeverity: Severity;
  /** Events delivered after the opening; undefined means all of them. */
  events?: readonly NotifiedEventKind[];
  /** The configuration the transport needs; undefined for the implicit Slack channels. */
  spec?: DestinationSpec;
  /** The tenant's channel and the platform channel hear every event, as they did before routing rules existed. */
  everything?: true;
  /** A PagerDuty key being rotated out: it hears the alerts it was paged for, and no new one. */
  retired?: true;
}

export type RoutingConfig = Pick<Config, 'PLATFORM_CHANNEL'> & Partial<Pick<Config, 'PLATFORM_DESTINATIONS' | 'destinationIdKey'>>;
type RoutingTenant = Pick<Tenant, 'channel'> & { destinations?: unknown; shadow?: boolean };

const SEVERITY_RANK: Record<Severity, number> = { warning: 0, critical: 1 };

/** PagerDuty pages people: by default only critical alerts reach it, and only the events it has an action for. */
const KIND_DEFAULTS: Record<string, { minSeverity: Severity; events?: readonly NotifiedEventKind[] }> = {
  pagerduty: { minSeverity: 'critical', events: ['opened', 'escalated', 'owner_changed', 'resolved'] },
};

/**
 * Events that can be a destination's first message: the alert opening, reaching its severity, or going live
 * (a shadow alert's first event told to the tenant's destinations: it starts their story from its current
 * state, so a critical one pages as its opening would have).
 */
const OPENINGS: readonly string[] = ['opened', 'escalated', 'went_live'];

/**
 * Where an alert's notifications may go: the tenant's channel, the platform
 * channel when it is set and different (both hear everything, as they always
 * have), then the tenant's configured destinations and the platform's. A
 * destination listed twice is routed once, by its first listing.
 */
export function routesFor(tenant: RoutingTenant, config: RoutingConfig): Route[] {
  const out: Route[] = [];
  const add = (route: Route) => {
    if (!out.some((r) => r.id === route.id)) out.push(route);
  };
  // Shadow: evaluated and recorded as usual, told only to the audit destination (the platform channel,
  // whose root is marked as shadow), never to the tenant's people or the platform's pagers.
  if (tenant.shadow) {
    const platform = config.PLATFORM_CHANNEL;
    if (platform && platform !== tenant.channel) add({ id: `slack:${platform}`, kind: 'slack', minSeverity: 'warning', everything: true });
    return out;
  }
  if (tenant.channel) add({ id: `slack:${tenant.channel}`, kind: 'slack', minSeverity: 'warning', everything: true });
  const platform = config.PLATFORM_CHANNEL;
  if (platform && platform !== tenant.channel) add({ id: `slack:${platform}`, kind: 'slack', minSeverity: 'warning', everything: true });
  for (const spec of [...storedDestinations(tenant.destinations), ...(config.PLATFORM_DESTINATIONS ?? [])]) add(routeOf(spec, config.destinationIdKey));
  return out;
}

/** `idKey`: the database's destination id key (RoutingConfig.destinationIdKey), which a webhook's id needs. */
export function routeOf(spec: DestinationSpec, idKey: string | undefined): Route {
  const defaults = KIND_DEFAULTS[spec.kind];
  const retired = spec.kind === 'pagerduty' && spec.retired ? { retired: true as const } : {};
  return { id: destinationId(spec, idKey), kind: spec.kind, minSeverity: spec.minSeverity ?? defaults?.minSeverity ?? 'warning', events: spec.events ?? defaults?.events, spec, ...retired };
}

/**
 * The tenant's destinations as stored by the workflows-file sync or the
 * tenants API, secrets resolved. They were validated on the way in; an entry
 * that no longer parses (hand-edited row) is left out rather than guessed at.
 */
function storedDestinations(stored: unknown): DestinationSpec[] {
  if (!Array.isArray(stored)) return [];
  return stored.flatMap((d) => {
    const parsed = resolvedDestinationSchema.safeParse(d);
    return parsed.success ? [parsed.data] : [];
  });
}

/** Every destination id for the tenant (Slack channels first), before routing rules. */
export function destinationsFor(tenant: RoutingTenant, config: RoutingConfig): string[] {
  return routesFor(tenant, config).map((r) => r.id);
}

/**
 * The routing rule, per destination, for one event of an alert whose
 * severity is `severity` after the event:
 * - the tenant's and platform channels get everything;
 * - a destination that has heard this alert (it has a row that was not
 *   skipped) gets the events it asked for, and always `resolved`;
 * - one that has not (a retired PagerDuty key never does)
 *   gets its first row when the alert is at or above its
 *   minimum severity and the event opens the alert for it (`opened`, or
 *   `escalated` for a critical-only destination: its thread starts there).
 *   A destination added mid-incident starts with the next event it asked for
 *   (a pager: with the next trigger, as an acknowledge has no incident there).
 * Quiet events (a failure count, for Slack to re-render its root) go only to
 * Slack destinations already in the thread, and updates (`data.update`) only
 * to Slack destinations.
 */
export function shouldRoute(route: Route, kind: AlertEventKind, severity: Severity, heard: boolean, update = false): boolean {
  if (route.everything) return true;
  // An update of an earlier message (a longer "also affected" list) edits it in Slack; elsewhere the first one was told.
  if (update && route.kind !== 'slack') return false;
  if ((QUIET_EVENT_KINDS as readonly string[]).includes(kind)) return route.kind === 'slack' && heard;
  if (!isNotifiedKind(kind)) return false;
  const wanted = route.events === undefined || route.events.includes(kind);
  if (heard) return wanted || kind === 'resolved';
  if (route.retired) return false;
  // Not told it opened, so not told it closed.
  if (kind === 'resolved' || !meets(route, severity)) return false;
  // A pager's incident exists only where a trigger went: an acknowledge (and so its resolve) sent to a key added
  // mid-incident would land on no incident there, while the one the alert opened stays open on the old key.
  if (route.kind === 'pagerduty') return OPENINGS.includes(kind);
  return wanted || OPENINGS.includes(kind);
}

function meets(route: Route, severity: Severity): boolean {
  return SEVERITY_RANK[severity] >= SEVERITY_RANK[route.minSeverity];
}

/**
 * The platform's own destinations among a tenant's routes (the platform
 * channel, PLATFORM_DESTINATIONS), unless the tenant lists the same one
 * itself: what a tenant token is not shown of an alert's deliveries.
 * PLATFORM_DESTINATIONS is the operator's configuration, kept like a secret
 * (on-call addresses, receivers' hosts, their error answers).
 */
export function platformOnlyDestinations(tenant: RoutingTenant, config: RoutingConfig): Set<string> {
  const own = new Set(destinationsFor({ ...tenant, shadow: false }, { PLATFORM_CHANNEL: undefined, PLATFORM_DESTINATIONS: [], destinationIdKey: config.destinationIdKey }));
  const platform = [
    ...(config.PLATFORM_CHANNEL ? [`slack:${config.PLATFORM_CHANNEL}`] : []),
    ...(config.PLATFORM_DESTINATIONS ?? []).map((spec) => routeOf(spec, config.destinationIdKey).id),
  ];
  return new Set(platform.filter((id) => !own.has(id)));
}
