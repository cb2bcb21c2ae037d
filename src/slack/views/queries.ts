import { activeStorms } from './storm-queries.js';
import { homeThreadLinks } from './home-links.js';
import type { Db } from '../../db/connect.js';
import type { Alert, Tenant, Workflow } from '../../db/schema.js';
import { profileFor } from '../../domain/cadence.js';
import { parseDestination } from '../../domain/events.js';
import { retriesAllowed } from '../../domain/retry-budget.js';
import { inShadow } from '../../domain/shadow.js';
import { silenceState } from '../../domain/silence.js';
import type { LauncherResolver } from '../../launcher.js';
import { listOpenAlerts, workflowHistory, type Scope } from '../../ledger/alert-queries.js';
import { blockedWorkflows, upstreamLabel, type BlockedWorkflow } from '../../ledger/dependency-state.js';
import { platformOnlyDestinations, type RoutingConfig } from '../../ledger/destinations.js';
import { cardFrom } from './alert-card-loader.js';
import type { HistoryRow } from '../blocks/history.js';
import type { HomeModel } from '../blocks/home.js';
import type { WorkflowDetail, WorkflowStatusRow } from '../blocks/status.js';
import { loadNormalDurations } from '../../ledger/run-durations.js';

/** Read models the Slack surfaces need beyond the engine's alert queries. Every one honours the scope. */

export async function alertInScope(db: Db, alertId: number, scope: Scope): Promise<{ alert: Alert; workflow: Workflow; tenant: Tenant } | undefined> {
  const alert = await db.selectFrom('alerts').selectAll().where('id', '=', alertId).executeTakeFirst();
  if (!alert) return undefined;
  const workflow = await db.selectFrom('workflows').selectAll().where('id', '=', alert.workflowId).executeTakeFirstOrThrow();
  if (scope.tenantId !== undefined && workflow.tenantId !== scope.tenantId) return undefined;
  const tenant = await db.selectFrom('tenants').selectAll().where('id', '=', workflow.tenantId).executeTakeFirstOrThrow();
  return { alert, workflow, tenant };
}

export async function workflowsInScope(db: Db, scope: Scope): Promise<Workflow[]> {
  return db
    .selectFrom('workflows')
    .selectAll()
    .where('enabled', '=', true)
    .$if(scope.tenantId !== undefined, (q) => q.where('tenantId', '=', scope.tenantId!))
    .orderBy('tenantId')
    .orderBy('name')
    .execute();
}

/**
 * `viewerTenant`: the channel's tenant (undefined: the platform channel); another tenant's upstream is not named to it.
 * `hidden`: workflows whose open alert the viewer may not see (in shadow, src/domain/rights.ts seesShadowAlerts): listed
 * without it, nor the upstream incident holding them back (a shadow downstream is held only by a shadow upstream).
 */
export async function statusRows(db: Db, workflows: Workflow[], now: Date, viewerTenant?: string, hidden: ReadonlySet<number> = new Set()): Promise<WorkflowStatusRow[]> {
  if (workflows.length === 0) return [];
  const ids = workflows.map((w) => w.id);
  const shown = ids.filter((id) => !hidden.has(id));
  const blocked = (await blockedWorkflows(db, viewerTenant)).filter((b) => shown.includes(b.workflowId));
  const alerts = shown.length ? await db.selectFrom('alerts').selectAll().where('status', '=', 'open').where('workflowId', 'in', shown).execute() : [];
  const lastRuns = await db
    .selectFrom('runs')
    .select(['workflowId', 'status', 'startedAt', 'finishedAt', 'longNoticedAt'])
    .distinctOn('workflowId')
    .where('workflowId', 'in', ids)
    .where('originalRunId', 'is', null)
    .orderBy('workflowId')
    .orderBy('id', 'desc')
    .execute();
  const normals = await loadNormalDurations(db, ids);
  return workflows.map((w) => {
    const alert = alerts.find((a) => a.workflowId === w.id);
    const run = lastRuns.find((r) => r.workflowId === w.id);
    const silenced = !!alert && silenceState(alert, now).silenced;
    const block = blocked.find((b) => b.workflowId === w.id);
    return {
      tenantId: w.tenantId,
      name: w.name,
      cron: w.cron,
      timezone: w.timezone,
      paused: w.paused,
      monitoring: w.monitoring,
      mode: w.mode,
      nextTickAt: w.nextTickAt,
      lastRun: run ? { status: run.status, finishedAt: run.finishedAt, startedAt: run.startedAt, runningLong: run.longNoticedAt !== null && !hidden.has(w.id) } : null,
      openAlert: alert ? { id: alert.id, severity: alert.severity, ownerUser: alert.ownerUser, silenced, consecutiveFailures: alert.consecutiveFailures, cause: alert.cause } : null,
      normalSeconds: normals.get(w.id)?.medianSeconds ?? null,
      blockedBy: block ? { upstream: upstreamLabel(block, viewerTenant), alertId: block.upstream.alertId, failures: block.failures, missed: block.missed, since: block.since } : null,
    };
  });
}

export async function historyRows(db: Db, workflowId: number, limit = 10): Promise<HistoryRow[]> {
  const ticks = await workflowHistory(db, workflowId, limit);
  return ticks.map((t) => ({
    runId: t.run.id,
    tick: t.run.tick,
    trigger: t.run.trigger,
    status: t.status,
    attempts: t.attempts.length,
    startedAt: t.run.startedAt,
    finishedAt: t.attempts[t.attempts.length - 1]?.finishedAt ?? t.run.finishedAt,
    error: t.error,
    outcomeNote: t.outcomeNote,
  }));
}

/** `hideAlert`: the viewer may not see the workflow's alert (in shadow, src/domain/rights.ts seesShadowAlerts). */
export async function workflowDetail(db: Db, launchers: LauncherResolver, workflow: Workflow, now: Date, hideAlert = false): Promise<WorkflowDetail> {
  // Named as the workflow's own tenant sees it: the detail never names another tenant's workflow.
  const [row] = await statusRows(db, [workflow], now, workflow.tenantId, new Set(hideAlert ? [workflow.id] : []));
  const tenant = await db.selectFrom('tenants').selectAll().where('id', '=', workflow.tenantId).executeTakeFirstOrThrow();
  const alert = hideAlert ? undefined : await db.selectFrom('alerts').selectAll().where('workflowId', '=', workflow.id).where('status', '=', 'open').executeTakeFirst();
  const profile = profileFor(workflow.cron, workflow.timezone, workflow.policy, now);
  return {
    row: row!,
    tenantName: tenant.name,
    cadenceSeconds: profile.cadenceSeconds,
    // The retries a tick gets: none without a launcher to start them, whatever the policy says.
    policy: { retries: retriesAllowed(profile.retries, !!launchers(workflow)), alertAfter: profile.alertAfter, firstSeverity: profile.firstSeverity, hasLauncher: !!launchers(workflow) },
    completeBy: profile.completeBy ? `${profile.completeBy.time} ${profile.completeBy.timeZone ?? workflow.timezone}` : null,
    runs: await historyRows(db, workflow.id, 10),
    alert: alert ? await cardFrom(db, launchers, alert, workflow, tenant) : null,
  };
}

/** How many dead notifications the App Home lists (newest first); the header counts them all. */
const HOME_DEAD_LISTED = 30;

/**
 * The App Home of one viewer: only `tenantIds` (src/domain/rights.ts
 * visibleTenants). The viewer's own alerts come first (DESIGN.md: "mine"
 * first): the tenants holding one lead, and inside a tenant its alerts the
 * viewer owns; otherwise the order stays (tenant id, then oldest alert).
 */
export async function homeModel(
  db: Db,
  now: Date,
  tenantIds: readonly string[],
  viewer?: string,
  /** `tenantView`: the viewer is not the platform's (src/domain/rights.ts seesShadowAlerts), so the platform's own destinations are left out. */
  options: { shadow?: boolean; tenantView?: RoutingConfig } = {},
): Promise<HomeModel> {
  if (tenantIds.length === 0) return { tenants: [], dead: [] };
  // Alerts in shadow only for a viewer of the audit destination (src/domain/rights.ts seesShadowAlerts); default: shown.
  const hidden = options.shadow === false ? await shadowWorkflowIds(db, tenantIds) : new Set<number>();
  const open = (await listOpenAlerts(db, {})).filter((o) => tenantIds.includes(o.tenant.id) && !hidden.has(o.workflow.id));
  const tenants = await db.selectFrom('tenants').select(['id', 'name']).where('enabled', '=', true).where('id', 'in', tenantIds).orderBy('id').execute();
  // A tenant's viewer never sees the platform's own destinations' failures (their errors name its receivers, its keys):
  // the same rule as the API's for a tenant token (platformOnlyDestinations).
  const platformOnly = options.tenantView ? await platformOnlyByTenant(db, tenantIds, options.tenantView) : [];
  const deadRows = () =>
    db
      .selectFrom('notifications as n')
      .innerJoin('alerts as a', 'a.id', 'n.alertId')
      .innerJoin('workflows as w', 'w.id', 'a.workflowId')
      .where('n.status', '=', 'dead')
      .where('w.tenantId', 'in', tenantIds)
      .$if(hidden.size > 0, (q) => q.where('w.id', 'not in', [...hidden]))
      .$if(platformOnly.length > 0, (q) => q.where((eb) => eb.and(platformOnly.map(([tenantId, ids]) => eb.not(eb.and([eb('w.tenantId', '=', tenantId), eb('n.destination', 'in', ids)]))))));
  const dead = await deadRows()
    .select(['n.id', 'n.destination', 'n.lastError', 'n.createdAt', 'w.tenantId', 'w.name as workflowName'])
    .orderBy('n.id', 'desc')
    .limit(HOME_DEAD_LISTED)
    .execute();
  const deadCount =
    dead.length < HOME_DEAD_LISTED
      ? dead.length
      : Number((await deadRows().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const blocked = (await blockedWorkflows(db)).filter((b) => tenantIds.includes(b.tenantId) && !hidden.has(b.workflowId));
  // The upstream is named only when the viewer may see its tenant.
  const upstreamOf = (b: BlockedWorkflow) => (tenantIds.includes(b.upstream.tenantId) ? upstreamLabel(b, undefined) : "another tenant's workflow");
  const mine = (o: { alert: { ownerUser: string | null } }) => viewer !== undefined && o.alert.ownerUser === viewer;
  const mineFirst = <T>(items: T[], isMine: (item: T) => boolean) => [...items.filter(isMine), ...items.filter((i) => !isMine(i))];
  const ordered = mineFirst(open, mine);
  const threads = await homeThreadLinks(db, open.map((o) => ({ id: o.alert.id, tenantChannel: o.tenant.channel })));
  return {
    storms: await activeStorms(db, tenantIds, { countShadow: options.shadow !== false }),
    tenants: mineFirst(tenants, (t) => ordered.some((o) => o.tenant.id === t.id && mine(o))).map((t) => ({
      ...t,
      blocked: blocked.filter((b) => b.tenantId === t.id).map((b) => ({ workflowName: b.name, upstream: upstreamOf(b), alertId: b.upstream.alertId })),
      alerts: ordered
        .filter((o) => o.tenant.id === t.id)
        .map(({ alert, workflow }) => ({
          id: alert.id,
          workflowName: workflow.name,
          severity: alert.severity,
          openedAt: alert.openedAt,
          consecutiveFailures: alert.consecutiveFailures,
          cause: alert.cause,
          ownerTeam: alert.ownerTeam,
          ownerUser: alert.ownerUser,
          silenced: silenceOf(alert, now),
          thread: threads.get(alert.id) ?? null,
        })),
    })),
    deadCount,
    // A destination is named by its kind only: its target (a webhook URL, an address, a routing key digest) is the tenant's secret.
    dead: dead.map((d) => {
      const { kind, target } = parseDestination(d.destination);
      return { id: d.id, destination: kind, tenantId: d.tenantId, workflowName: d.workflowName, lastError: d.lastError && target ? d.lastError.split(target).join('…') : d.lastError, createdAt: d.createdAt };
    }),
  };
}

/** Per tenant, the platform's own destinations among its routes (none: left out). */
async function platformOnlyByTenant(db: Db, tenantIds: readonly string[], routing: RoutingConfig): Promise<[string, string[]][]> {
  const tenants = await db.selectFrom('tenants').select(['id', 'channel', 'destinations']).where('id', 'in', tenantIds).execute();
  return tenants.map((t): [string, string[]] => [t.id, [...platformOnlyDestinations(t, routing)]]).filter(([, ids]) => ids.length > 0);
}

/** The tenants' workflows in shadow now (src/domain/shadow.ts inShadow: their own flag or their tenant's). */
export async function shadowWorkflowIds(db: Db, tenantIds: readonly string[]): Promise<Set<number>> {
  const rows = await db
    .selectFrom('workflows as w')
    .innerJoin('tenants as t', 't.id', 'w.tenantId')
    .select(['w.id', 'w.shadow as workflowShadow', 't.shadow as tenantShadow'])
    .where('w.tenantId', 'in', tenantIds)
    .where((eb) => eb.or([eb('w.shadow', '=', true), eb('t.shadow', '=', true)]))
    .execute();
  return new Set(rows.filter(inShadow).map((r) => r.id));
}

/** The home tab's silence of an alert: its end while one is in force (src/domain/silence.ts), else null. */
function silenceOf(alert: Pick<Alert, 'status' | 'silencedBy' | 'silencedUntil'>, now: Date): { until: Date | 'resolved' } | null {
  const state = silenceState(alert, now);
  return state.silenced ? { until: state.until } : null;
}
