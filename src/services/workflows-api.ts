import { recordPolicyVersionsIn } from './policy-versions.js';
import { announceGoingLive, shadowStates } from './shadow.js';
import { announceStoredSecrets } from './stored-secrets.js';
import type { Config } from '../config/env.js';
import { recurringMaintenanceOf, type WorkflowSpec } from '../config/workflows-file.js';
import type { Db } from '../db/connect.js';
import type { Alert, LauncherConfig, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { profileFor } from '../domain/cadence.js';
import { crontabCheck, fireTimesAfter, nextFireAfter, nextTickAfterEdit } from '../domain/schedule.js';
import { newPingKey } from '../secrets.js';
import { findOpenAlertForWorkflow, workflowHistory, type Scope } from '../ledger/alert-queries.js';
import { blockedWorkflows, type BlockedWorkflow } from '../ledger/dependency-state.js';
import { dependsOnView, lockDependencyGraph, replaceDependencies, resolveApiDependencies, type DependencyIssue } from './dependencies.js';
import { modeOf } from './sync-workflows.js';
import { configPauseChanged, resolveAlertsOfWorkflows } from './workflow-state.js';
import { runningLongAfter } from '../domain/run-duration.js';
import type { WorkflowLimitRefusal } from '../domain/tenant-limits.js';
import { workflowLimitOf } from './tenant-limits.js';
import { shownUrl } from '../domain/redact.js';
import { loadNormalDurations } from '../ledger/run-durations.js';

/** Workflows over the API: the read model, and the same upsert the file sync does, for workflows the API owns. */

const workflowQuery = (db: Db, scope: Scope) =>
  db
    .selectFrom('workflows')
    .selectAll('workflows')
    .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
    .where('workflows.enabled', '=', true)
    .where('tenants.enabled', '=', true)
    .$if(scope.tenantId !== undefined, (q) => q.where('workflows.tenantId', '=', scope.tenantId!));

export async function findWorkflow(db: Db, tenant: string, name: string, scope: Scope): Promise<Workflow | undefined> {
  if (scope.tenantId !== undefined && scope.tenantId !== tenant) return undefined;
  return workflowQuery(db, scope).where('workflows.tenantId', '=', tenant).where('workflows.name', '=', name).executeTakeFirst();
}

export function pingUrl(config: Pick<Config, 'PUBLIC_URL' | 'PORT'>, key: string): string {
  return `${(config.PUBLIC_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, '')}/ping/${key}`;
}

/**
 * A line to paste into a crontab: report the start, run the job keeping its
 * output, report the end with the exit code and the output's tail as the body.
 *
 * - A run id (`rid`, 64 random bits from /dev/urandom) ties the start to its
 *   end: `curl --retry` resending a start whose answer was lost is the same
 *   run, not a second one whose end would leave the tick's row running until
 *   its timeout fails it; overlapping runs end their own rows.
 * - The output goes to a temporary file, never through `echo`: dash (the
 *   /bin/sh cron uses on Debian and Ubuntu) reads `\c`, `\n`, `\t` in what
 *   echo prints, so `C:\cache` cut the log at `C:`. `rc=$?` right after the
 *   job is its own exit status; the body goes through stdin (no
 *   argument-length limit). Without a temporary file the job still runs.
 * - No `%` anywhere: cron would turn it into a newline.
 */
export function crontabLine(config: Pick<Config, 'PUBLIC_URL' | 'PORT'>, workflow: Pick<Workflow, 'cron' | 'timezone' | 'pingKey'>, command = '/path/to/your-job'): string {
  const url = pingUrl(config, workflow.pingKey);
  const zone = workflow.timezone === 'UTC' ? '' : `CRON_TZ=${workflow.timezone}\n`;
  const curl = 'curl -fsS -m 10 --retry 3 -o /dev/null';
  const out = '"${f:-/dev/null}"';
  return (
    `${zone}${workflow.cron} rid=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \\n'); ${curl} "${url}/start?rid=$rid"; ` +
    `f=$(mktemp); (${command}) >${out} 2>&1; rc=$?; ` +
    `tail -c 100000 ${out} | ${curl} --data-binary @- "${url}/$rc?rid=$rid"; [ -z "$f" ] || rm -f "$f"`
  );
}

/** The crontab line, or why there is none: a schedule no crontab can hold would make `crontab` refuse the file. */
function crontabView(config: Pick<Config, 'PUBLIC_URL' | 'PORT'>, workflow: Workflow): { crontab?: string; crontabUnavailable?: string } {
  const check = crontabCheck(workflow.cron);
  return check.ok ? { crontab: crontabLine(config, workflow) } : { crontabUnavailable: check.reason };
}

/** Secrets in a launcher (its signing secret, header values, a password in its URL) never leave through the API. */
function launcherView(launcher: LauncherConfig | null) {
  if (!launcher) return null;
  if (launcher.kind === 'command') return { kind: 'command', command: launcher.command, cwd: launcher.cwd ?? null, env: Object.keys(launcher.env ?? {}) };
  return { kind: 'http', url: shownUrl(launcher.url), mode: launcher.mode, headers: Object.keys(launcher.headers ?? {}), ownSecret: !!launcher.secret };
}

function alertView(alert: Alert | undefined) {
  if (!alert) return null;
  return {
    id: alert.id,
    severity: alert.severity,
    openedAt: alert.openedAt,
    consecutiveFailures: alert.consecutiveFailures,
    lastError: alert.lastError,
    ownerTeam: alert.ownerTeam,
    ownerUser: alert.ownerUser,
    acknowledged: alert.acknowledgedAt !== null,
    silencedUntil: alert.silencedUntil,
    policyVersion: alert.policyVersion,
  };
}

export async function listWorkflows(db: Db, scope: Scope) {
  const workflows = await workflowQuery(db, scope).orderBy('workflows.tenantId').orderBy('workflows.name').execute();
  const ids = workflows.map((w) => w.id);
  const alerts = ids.length ? await db.selectFrom('alerts').selectAll().where('workflowId', 'in', ids).where('status', '=', 'open').execute() : [];
  const last = ids.length
    ? await db
        .selectFrom('runs')
        .distinctOn('workflowId')
        .select(['workflowId', 'id', 'tick', 'status', 'startedAt', 'finishedAt'])
        .where('workflowId', 'in', ids)
        .where('originalRunId', 'is', null)
        .where('status', '!=', 'skipped')
        .orderBy('workflowId')
        .orderBy('id', 'desc')
        .execute()
    : [];
  const blocked = await blockedWorkflows(db, scope.tenantId);
  return workflows.map((w) => {
    const lastRun = last.find((r) => r.workflowId === w.id);
    const block = blocked.find((b) => b.workflowId === w.id);
    return {
      tenant: w.tenantId,
      name: w.name,
      mode: w.mode,
      cron: w.cron,
      timezone: w.timezone,
      paused: w.paused,
      monitoring: w.monitoring,
      nextTickAt: w.nextTickAt,
      lastRun: lastRun ? { id: lastRun.id, tick: lastRun.tick, status: lastRun.status, startedAt: lastRun.startedAt, finishedAt: lastRun.finishedAt } : null,
      openAlert: alertView(alerts.find((a) => a.workflowId === w.id)),
      upstreamBlocked: block ? blockedView(block, scope.tenantId) : null,
    };
  });
}

/** Held back by an open upstream incident: which one, how often, since when (the upstream named only where the caller may see it). */
function blockedView(b: BlockedWorkflow, scopeTenant: string | undefined) {
  const visible = scopeTenant === undefined || b.upstream.tenantId === scopeTenant;
  return {
    upstream: visible ? { tenant: b.upstream.tenantId, workflow: b.upstream.workflow, alertId: b.upstream.alertId } : { otherTenant: true },
    since: b.since,
    failures: b.failures,
    missed: b.missed,
  };
}

async function blockedOf(db: Db, workflow: Workflow, scopeTenant: string | undefined) {
  const block = (await blockedWorkflows(db, workflow.tenantId)).find((b) => b.workflowId === workflow.id);
  return block ? blockedView(block, scopeTenant) : null;
}

export async function workflowView(deps: Pick<Deps, 'db' | 'clock' | 'config'>, workflow: Workflow, runs = 10, scopeTenant?: string) {
  const now = deps.clock.now();
  const profile = profileFor(workflow.cron, workflow.timezone, workflow.policy, now);
  const { derived, overrides, cadenceSeconds, escalateAfterFailures, ...effective } = profile;
  const history = await workflowHistory(deps.db, workflow.id, runs);
  const normal = (await loadNormalDurations(deps.db, [workflow.id])).get(workflow.id) ?? null;
  return {
    tenant: workflow.tenantId,
    name: workflow.name,
    mode: workflow.mode,
    source: workflow.source,
    paused: workflow.paused,
    monitoring: workflow.monitoring,
    schedule: {
      cron: workflow.cron,
      timezone: workflow.timezone,
      nextTickAt: workflow.nextTickAt,
      upcoming: fireTimesAfter(workflow.cron, workflow.timezone, now, 3),
    },
    launcher: launcherView(workflow.launcher),
    profile: { cadenceSeconds, escalateAfterFailures, derived, overrides, effective },
    /** Learned from the newest successful runs (issue 16); null before enough history. */
    duration: { normal, runningLongAfterSeconds: runningLongAfter(normal, profile.runningLongAfterSeconds) },
    policy: { version: workflow.policyVersion, shadow: workflow.shadow, versions: `/api/v1/workflows/${workflow.tenantId}/${workflow.name}/policy-versions` },
    lastRuns: history.map((h) => ({
      id: h.run.id,
      tick: h.run.tick,
      trigger: h.run.trigger,
      status: h.status,
      error: h.error,
      outcomeNote: h.outcomeNote,
      startedAt: h.run.startedAt,
      finishedAt: h.run.finishedAt,
      durationSeconds: h.run.durationSeconds,
      attempts: h.attempts,
    })),
    openAlert: alertView(await findOpenAlertForWorkflow(deps.db, workflow.id)),
    ...(await dependsOnView(deps.db, workflow, scopeTenant)),
    upstreamBlocked: await blockedOf(deps.db, workflow, scopeTenant),
    /** The read API for this workflow's history (docs/api.md); each of `lastRuns` is at `/api/v1/runs/{id}`. */
    links: {
      runs: `/api/v1/runs?tenant=${encodeURIComponent(workflow.tenantId)}&workflow=${encodeURIComponent(workflow.name)}`,
      failedRuns: `/api/v1/runs?tenant=${encodeURIComponent(workflow.tenantId)}&workflow=${encodeURIComponent(workflow.name)}&status=failed`,
    },
    ping: {
      url: pingUrl(deps.config, workflow.pingKey),
      ...(workflow.mode === 'observed' ? crontabView(deps.config, workflow) : {}),
    },
  };
}

export type PutResult =
  | { kind: 'created' | 'updated'; workflow: Workflow }
  | { kind: 'tenant_not_found' }
  | { kind: 'owned_by_file' }
  | { kind: 'operator_launcher' }
  | { kind: 'ping_key_taken' }
  | { kind: 'bad_dependencies'; issues: DependencyIssue[] }
  | { kind: 'workflow_limit'; refusal: WorkflowLimitRefusal };

/**
 * Creates or replaces an API-owned workflow (validated by the caller with the
 * file's own schema). A workflow the file declares is refused: the next start
 * would overwrite the change. next_tick_at is recomputed whenever the
 * schedule changes or the workflow starts firing again, so an unpaused
 * workflow does not fire a tick that fell while it was paused.
 */
export async function putWorkflow(deps: Pick<Deps, 'db' | 'clock' | 'config'>, spec: WorkflowSpec, scope: Scope, actor: string | null = null): Promise<PutResult> {
  if (scope.tenantId !== undefined && scope.tenantId !== spec.tenant) return { kind: 'tenant_not_found' };
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx): Promise<PutResult> => {
    // Before any row lock: the graph's changes take turns (see lockDependencyGraph).
    if (spec.dependsOn?.length) await lockDependencyGraph(trx);
    // A tenant token's writes take turns on the tenant's row (before any workflow row), so its workflow count is exact.
    const tenant = await trx.selectFrom('tenants').select('id').where('id', '=', spec.tenant).where('enabled', '=', true).$if(scope.tenantId !== undefined, (q) => q.forNoKeyUpdate()).executeTakeFirst();
    if (!tenant) return { kind: 'tenant_not_found' };
    const current = await trx.selectFrom('workflows').selectAll().where('tenantId', '=', spec.tenant).where('name', '=', spec.name).forUpdate().executeTakeFirst();
    if (current?.source === 'file' && current.enabled) return { kind: 'owned_by_file' };
    // A tenant cannot replace what the operator trusted (a command on the host, a launcher to any address).
    if (scope.tenantId !== undefined && current?.enabled && current.launcher?.operatorSet) return { kind: 'operator_launcher' };
    const limited = scope.tenantId !== undefined && spec.enabled && !current?.enabled && (await workflowLimitOf(trx, spec.tenant, deps.config.MAX_WORKFLOWS_PER_TENANT));
    if (limited) return { kind: 'workflow_limit', refusal: limited };
    const shadowBefore = await shadowStates(trx, { tenantId: spec.tenant, workflowName: spec.name });
    const pingKey = spec.pingKey ?? current?.pingKey ?? newPingKey();
    const keyOwner = await trx.selectFrom('workflows').select('id').where('pingKey', '=', pingKey).executeTakeFirst();
    if (keyOwner && keyOwner.id !== current?.id) return { kind: 'ping_key_taken' };
    const dependencies = await resolveApiDependencies(trx, spec, scope.tenantId);
    if (!dependencies.ok) return { kind: 'bad_dependencies', issues: dependencies.issues };
    const mode = modeOf(spec);
    // A pause set by hand (Slack, the pause endpoint) is kept until resumed by hand.
    const paused = spec.paused || !!current?.pausedBy;
    const restarts = !current || !current.enabled || current.mode !== mode || (current.paused && !paused);
    const edited = !!current && (current.cron !== spec.cron || current.timezone !== spec.timezone);
    const values = {
      cron: spec.cron,
      timezone: spec.timezone,
      mode,
      launcher: spec.launcher ? JSON.stringify(spec.launcher as LauncherConfig) : null,
      policy: JSON.stringify(spec.policy ?? {}),
      monitoring: spec.monitoring,
      paused,
      enabled: spec.enabled,
      maintenance: JSON.stringify(recurringMaintenanceOf(spec.maintenance, spec.timezone)),
      shadow: spec.shadow ?? false,
      source: 'api' as const,
      removedAt: null,
      pingKey,
      updatedAt: now,
      nextTickAt: restarts ? nextFireAfter(spec.cron, spec.timezone, now) : edited ? nextTickAfterEdit(spec.cron, spec.timezone, current!.nextTickAt, now) : current!.nextTickAt,
    };
    const written = current
      ? await trx.updateTable('workflows').set(values).where('id', '=', current.id).returningAll().executeTakeFirstOrThrow()
      : await trx.insertInto('workflows').values({ tenantId: spec.tenant, name: spec.name, createdAt: now, ...values }).returningAll().executeTakeFirstOrThrow();
    if (current && written.enabled) await configPauseChanged(trx, current, paused, actor, now, deps.config);
    await replaceDependencies(trx, written.id, dependencies.upstreamIds);
    await announceStoredSecrets(trx, [spec.launcher]);
    if (current && !written.enabled) await resolveAlertsOfWorkflows(trx, [written.id], 'workflow_disabled', actor, now, deps.config);
    await announceGoingLive(trx, shadowBefore, now, deps.config, { tenantId: spec.tenant, workflowName: spec.name });
    const versioned = await recordPolicyVersionsIn(trx, [written.id], { now, config: deps.config, changedBy: `api (${scope.tenantId ? `tenant ${scope.tenantId}` : 'admin'})` });
    const workflow = versioned ? await trx.selectFrom('workflows').selectAll().where('id', '=', written.id).executeTakeFirstOrThrow() : written;
    // A deleted (disabled) one brought back did not exist a moment before: created, with its history.
    return { kind: current?.enabled ? 'updated' : 'created', workflow };
  });
}

export type DeleteResult = { kind: 'deleted' } | { kind: 'not_found' } | { kind: 'owned_by_file' } | { kind: 'operator_launcher' };

/**
 * Disables (and marks removed) rather than deletes, like removing it from the file: its history stays, nothing fires
 * or alerts, its open alert is resolved (`by: 'workflow_deleted'`) in the same transaction; retention deletes it later.
 */
export async function deleteWorkflow(deps: Pick<Deps, 'db' | 'clock' | 'config'>, tenant: string, name: string, scope: Scope, actor: string | null = null): Promise<DeleteResult> {
  const workflow = await findWorkflow(deps.db, tenant, name, scope);
  if (!workflow) return { kind: 'not_found' };
  if (workflow.source === 'file') return { kind: 'owned_by_file' };
  if (scope.tenantId !== undefined && workflow.launcher?.operatorSet) return { kind: 'operator_launcher' };
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx): Promise<DeleteResult> => {
    const disabled = await trx.updateTable('workflows').set({ enabled: false, removedAt: now, updatedAt: now }).where('id', '=', workflow.id).where('enabled', '=', true).returning('id').execute();
    if (disabled.length === 0) return { kind: 'not_found' };
    await resolveAlertsOfWorkflows(trx, [workflow.id], 'workflow_deleted', actor, now, deps.config);
    return { kind: 'deleted' };
  });
}

/** Every recorded version of a workflow's effective policy, newest first: what it was, who or what changed it, when. */
export async function policyVersions(db: Db, workflowId: number) {
  const rows = await db.selectFrom('policyVersions').selectAll().where('workflowId', '=', workflowId).orderBy('version', 'desc').execute();
  return rows.map((r) => ({ version: r.version, policy: r.policy, changedBy: r.changedBy, changedAt: r.changedAt }));
}
