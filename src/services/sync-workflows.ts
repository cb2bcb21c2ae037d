import { sql, type Transaction } from 'kysely';
import type { Db } from '../db/connect.js';
import { describeIssues, recurringMaintenanceOf, WorkflowsFileError, type DestinationSpec, type WorkflowsFile, type WorkflowSpec } from '../config/workflows-file.js';
import type { SecretEnv, SecretIssue } from '../config/secret-refs.js';
import { resolveFileSecrets, type FileSecrets } from './sync-file-secrets.js';
import { nextFireAfter, nextTickAfterEdit } from '../domain/schedule.js';
import { channelRefusal } from '../domain/tenant-channels.js';
import { hashToken, newPingKey, rememberSecrets, secretsOfEntry } from '../secrets.js';
import type { Database, LauncherConfig, Workflow } from '../db/schema.js';
import { fileClaimsPingKey } from '../domain/ping-keys.js';
import type { RoutingConfig } from '../ledger/destinations.js';
import { syncFileDependencies } from './dependencies.js';
import { configPauseChanged, enabledWorkflowsOf, resolveAlertsOfWorkflows, restartClocks } from './workflow-state.js';
import { recordPolicyVersionsIn } from './policy-versions.js';
import { changedFields, summariseSync, type SyncOutcome, type SyncSummary } from '../domain/definition-changes.js';
import { apiTenantsIn, syncTenants } from './sync-tenants.js';
import type { FileSync } from '../domain/file-sync-order.js';
import { contentHashOf, fileSyncOrder, recordFileSync, type FileOrigin } from './file-sync-order.js';
import { announceGoingLive, shadowStates } from './shadow.js';

export interface SyncResult {
  /** As `workflows`, for the file's tenants. */
  tenants: SyncSummary;
  /**
   * Each workflow of the file created, updated (a field differs from what was
   * stored) or unchanged; file workflows gone from it removed (disabled).
   * `changed` names the updated and removed ones and their fields (at most 20).
   */
  workflows: SyncSummary;
  /**
   * Tenants (`acme`) and workflows (`acme/load`) managed over the API until
   * this sync, now declared in the file: the file's version replaced the
   * API's, and the API refuses to change them from now on. The start warns.
   */
  takenOver: { tenants: string[]; workflows: string[] };
  /**
   * Set when nothing was synced because this copy of the file is older than
   * one a running replica synced since (src/domain/file-sync-order.ts): that
   * sync. The start warns, naming both files.
   */
  olderThan?: FileSync;
}

export function modeOf(spec: Pick<WorkflowSpec, 'mode' | 'launcher'>): 'managed' | 'observed' {
  return spec.mode ?? (spec.launcher ? 'managed' : 'observed');
}

/**
 * Makes the database say what the file says, in one transaction: tenants and
 * workflows are upserted; those that came from the file and are gone from it
 * are disabled, never deleted, so their history stays. Workflows managed over
 * the API are left alone. An advisory lock serialises replicas starting at once.
 * Workflows whose definition did not change are not written. With `origin`,
 * the sync is recorded, and a copy of the file older than one a running
 * replica synced since is refused, writing nothing (`olderThan`).
 */
export async function syncWorkflowsFile(
  db: Db,
  file: WorkflowsFile,
  now: Date,
  env: SecretEnv = process.env,
  /** Where events recorded by the sync go: a disabled workflow's `resolved`, a policy change told to an open alert. */
  routing: RoutingConfig = { PLATFORM_CHANNEL: undefined },
  /** Where the file was read: the sync is recorded, and refused when the copy is older (without it, neither: the tests' files). */
  origin?: FileOrigin,
): Promise<SyncResult> {
  const secrets = resolveFileSecrets(file, env);
  const contentHash = contentHashOf(file);
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('scheduler-bot:sync-workflows'))`.execute(trx);
    if (origin) {
      const order = await fileSyncOrder(trx, contentHash, origin, now);
      if (order.kind === 'older') return nothingSynced(order.newer);
      await recordFileSync(trx, contentHash, origin, now);
    }
    const shadowBefore = await shadowStates(trx);
    const tenantsTaken = await apiTenantsIn(trx, file);
    const { outcomes: tenantOutcomes, turnedOff: tenantsOff, turnedOn: tenantsOn } = await syncTenants(trx, file, secrets, env, now, routing);
    const workflows = await syncWorkflows(trx, file, secrets, now, routing);
    const dependsOnChanged = await syncFileDependencies(trx, file.workflows);
    // Disabling stops its escalation at once: its open alert is resolved with that reason.
    await resolveAlertsOfWorkflows(trx, workflows.disabled, 'workflow_disabled', null, now, routing);
    // Gone from the file (removed, renamed, moved to another tenant): the thread says so, not only "disabled".
    await resolveAlertsOfWorkflows(trx, workflows.gone, 'workflow_disabled', null, now, routing, { how: 'removed_from_file' });
    // So does removing a tenant, for its workflows the file did not declare (made over the API): nothing can report to them now.
    await resolveAlertsOfWorkflows(trx, await enabledWorkflowsOf(trx, tenantsOff), 'tenant_disabled', null, now, routing);
    await restartClocks(trx, tenantsOn, now);
    await recordPolicyVersionsIn(trx, [...workflows.seen].filter((id) => !workflows.disabled.includes(id)), { now, config: routing, changedBy: 'workflows file' });
    await announceGoingLive(trx, shadowBefore, now, routing);
    return { tenants: summariseSync(tenantOutcomes, new Set()), workflows: summariseSync(workflows.outcomes, dependsOnChanged), takenOver: { tenants: tenantsTaken, workflows: workflows.takenOver } };
  });
}

/** An older copy of the file (src/domain/file-sync-order.ts): nothing written, the newer sync named. */
function nothingSynced(newer: FileSync): SyncResult {
  return { tenants: summariseSync(new Map(), new Set()), workflows: summariseSync(new Map(), new Set()), takenOver: { tenants: [], workflows: [] }, olderThan: newer };
}

/**
 * The file's workflows created, or updated where a field differs from what is
 * stored (compared as values, src/domain/definition-changes.ts: a restart
 * with the same file writes nothing), file workflows gone from it disabled;
 * the ids the file keeps (`seen`), those it turned off with `enabled: false`
 * (`disabled`) and those gone from it (`gone`).
 */
async function syncWorkflows(trx: Transaction<Database>, file: WorkflowsFile, secrets: FileSecrets, now: Date, routing: RoutingConfig) {
  const outcomes = new Map<number, SyncOutcome>();
  const existing = await trx.selectFrom('workflows').selectAll().forUpdate().execute();
  await moveFixedPingKeys(trx, file, existing);
  const byKey = new Map(existing.map((w) => [`${w.tenantId}/${w.name}`, w]));
  const seen = new Set<number>();
  const disabled: number[] = [];
  const takenOver: string[] = [];
  for (const spec of file.workflows) {
    const current = byKey.get(`${spec.tenant}/${spec.name}`);
    if (current?.source === 'api') takenOver.push(`${spec.tenant}/${spec.name}`);
    const definition = definitionOf(spec, current, secrets);
    const { paused, enabled, mode } = definition;
    // Resuming (re-enabled, or unpaused) starts from the next tick to come: what fell
    // while it was off was never meant to run, so it is neither fired late nor missed.
    const resumed = !!current && enabled && (!current.enabled || (current.paused && !paused));
    const scheduleChanged = !current || resumed || current.cron !== spec.cron || current.timezone !== spec.timezone || current.mode !== mode;
    const values = {
      ...definition,
      launcher: definition.launcher ? JSON.stringify(definition.launcher) : null,
      policy: JSON.stringify(definition.policy),
      maintenance: JSON.stringify(definition.maintenance),
      updatedAt: now,
      // Managed and observed workflows both keep next_tick_at: the scheduler fires
      // managed ones, the freshness detector uses it for observed ones.
      nextTickAt: !current || resumed || current.mode !== mode
        ? nextFireAfter(spec.cron, spec.timezone, now)
        : scheduleChanged
          ? nextTickAfterEdit(spec.cron, spec.timezone, current.nextTickAt, now)
          : current.nextTickAt,
    };
    if (current) {
      seen.add(current.id);
      // Declared again (`enabled: false` included): no longer removed, so retention never deletes it.
      if (current.removedAt) await trx.updateTable('workflows').set({ removedAt: null }).where('id', '=', current.id).execute();
      const fields = changedFields(current, definition);
      const key = `${spec.tenant}/${spec.name}`;
      if (!fields.length) {
        outcomes.set(current.id, { key, kind: 'unchanged', fields });
        continue;
      }
      await trx.updateTable('workflows').set(values).where('id', '=', current.id).execute();
      if (enabled) await configPauseChanged(trx, current, paused, 'workflows file', now, routing);
      if (!enabled && current.enabled) disabled.push(current.id);
      outcomes.set(current.id, { key, kind: 'updated', fields });
    } else {
      const created = await trx
        .insertInto('workflows')
        .values({ tenantId: spec.tenant, name: spec.name, pingKey: spec.pingKey ?? newPingKey(), createdAt: now, ...values })
        .returning('id')
        .executeTakeFirstOrThrow();
      seen.add(created.id);
      outcomes.set(created.id, { key: `${spec.tenant}/${spec.name}`, kind: 'created', fields: [] });
    }
  }
  const goneRows = existing.filter((w) => w.source === 'file' && w.enabled && !seen.has(w.id));
  const gone = goneRows.map((w) => w.id);
  if (gone.length) {
    await trx.updateTable('workflows').set({ enabled: false, removedAt: now, updatedAt: now }).where('id', 'in', gone).execute();
  }
  // One the file had turned off (`enabled: false`) and no longer names is removed too, for retention (nothing else changes).
  const goneOff = existing.filter((w) => w.source === 'file' && !w.enabled && !w.removedAt && !seen.has(w.id)).map((w) => w.id);
  if (goneOff.length) await trx.updateTable('workflows').set({ removedAt: now }).where('id', 'in', goneOff).execute();
  for (const w of goneRows) outcomes.set(w.id, { key: `${w.tenantId}/${w.name}`, kind: 'removed', fields: [] });
  return { outcomes, seen, gone, disabled, takenOver };
}

/** What the file says of one workflow, as stored (launcher, policy and maintenance as values); a fixed ping key only when the file sets one. */
function definitionOf(spec: WorkflowSpec, current: Workflow | undefined, secrets: FileSecrets) {
  return {
    cron: spec.cron,
    timezone: spec.timezone,
    mode: modeOf(spec),
    launcher: secrets.launchers.get(spec) ?? null,
    policy: spec.policy ?? {},
    monitoring: spec.monitoring,
    // A pause set by hand (Slack, API) outlives a restart; `/scheduler resume` ends it.
    paused: spec.paused || !!current?.pausedBy,
    enabled: spec.enabled,
    maintenance: recurringMaintenanceOf(spec.maintenance, spec.timezone),
    shadow: spec.shadow ?? false,
    source: 'file' as const,
    ...(spec.pingKey ? { pingKey: spec.pingKey } : {}),
  };
}

/**
 * The file's fixed ping keys held by another workflow (a rename, a move to
 * another tenant, a key moved between entries) handed over before the
 * upserts, by the rule of src/domain/ping-keys.ts: the holder gets a fresh
 * key, or the file is refused naming `workflows[i].pingKey` when the holder
 * is a live workflow managed over the API. Without this, the unique index on
 * ping_key stopped the start with a bare constraint violation.
 */
async function moveFixedPingKeys(trx: Transaction<Database>, file: WorkflowsFile, existing: Workflow[]): Promise<void> {
  const issues: SecretIssue[] = [];
  const moving: number[] = [];
  const liveTenants = new Set((await trx.selectFrom('tenants').select('id').where('enabled', '=', true).execute()).map((t) => t.id));
  file.workflows.forEach((spec, i) => {
    const holder = spec.pingKey ? existing.find((w) => w.pingKey === spec.pingKey) : undefined;
    if (!holder || (holder.tenantId === spec.tenant && holder.name === spec.name)) return;
    const claim = fileClaimsPingKey({ ...holder, enabled: holder.enabled && liveTenants.has(holder.tenantId) });
    if (claim.kind === 'moves') moving.push(holder.id);
    else issues.push({ code: 'custom', path: ['workflows', i, 'pingKey'], message: `ping key ${claim.reason}`, input: spec.pingKey });
  });
  if (issues.length) throw new WorkflowsFileError('workflows file', describeIssues('workflows file', undefined, file, issues));
  for (const id of moving) await trx.updateTable('workflows').set({ pingKey: newPingKey() }).where('id', '=', id).execute();
}
