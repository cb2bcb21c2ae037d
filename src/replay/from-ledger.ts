import type { Db } from '../db/connect.js';
import type { PolicyOverrides } from '../db/schema.js';
import { versionInForceAt, type RecordedVersion } from '../domain/policy-version.js';
import { replayStart } from '../domain/replay-window.js';
import { maintenanceWindows, manualRunActions, openAlertsAt } from './ledger-context.js';
import { foldLedgerTicks } from './ledger-ticks.js';
import type { ScenarioInput } from './scenario.js';

/**
 * Turns what really happened (the ledger's scheduled ticks and their
 * attempts) into a replay scenario, so a real week can be replayed through
 * the engine under another policy, and saved as a regression test.
 *
 * What a scenario can say, and therefore what is carried over: each tick's
 * attempts in order (succeeded with rows, failed with error and stage, or
 * missing) and the first attempt's duration. Consecutive ticks that did the
 * same are folded into one outcome rule. What it cannot say is left out and
 * counted in `notes`: external runs (no tick), manual runs (Slack actions are
 * not in the ledger), and ticks the bot skipped while it was down (replayed
 * as successes, which is what "neither a failure nor a success" comes to for
 * counting).
 */

export interface LedgerSelection {
  tenant: string;
  /** One workflow by name; all of the tenant's monitored workflows when absent. */
  workflow?: string;
  since: Date;
  until: Date;
  platformChannel?: string;
}

export interface LedgerScenario {
  scenario: ScenarioInput;
  /** Workflow name → the policy overrides in force at `since` (what the baseline replays under). */
  policies: Record<string, PolicyOverrides>;
  notes: string[];
}

export class LedgerSelectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LedgerSelectionError';
  }
}

type PolicyChangeInput = NonNullable<ScenarioInput['policyChanges']>[number];

/** A channel id for a tenant that has none: a scenario needs one to show its threads in. */
const NO_CHANNEL = 'CNOCHANNEL';
/** A scenario's longest span (src/replay/scenario.ts): the lead-in stops there. */
const MAX_REPLAY_SPAN_MS = 31 * 86_400_000;

/**
 * The monitored workflows a replay of the tenant's period covers. A workflow
 * disabled since (removed from the file, renamed, deleted over the API)
 * keeps its history: its period is replayed when it has runs in it.
 */
async function replayedWorkflows(db: Db, tenantId: string, selection: LedgerSelection) {
  let query = db
    .selectFrom('workflows')
    .select(['id', 'name', 'cron', 'timezone', 'policy', 'mode', 'shadow', 'enabled'])
    .where('tenantId', '=', tenantId)
    .where((eb) =>
      eb.or([
        eb('enabled', '=', true),
        eb.exists(
          eb
            .selectFrom('runs')
            .select('runs.id')
            .whereRef('runs.workflowId', '=', 'workflows.id')
            .where((r) => r.fn.coalesce('runs.startedAt', 'runs.createdAt'), '>=', selection.since)
            .where((r) => r.fn.coalesce('runs.startedAt', 'runs.createdAt'), '<=', selection.until),
        ),
      ]),
    )
    .where('monitoring', '=', true)
    .orderBy('name');
  if (selection.workflow) query = query.where('name', '=', selection.workflow);
  return query.execute();
}

export async function scenarioFromLedger(db: Db, selection: LedgerSelection): Promise<LedgerScenario> {
  const tenant = await db.selectFrom('tenants').select(['id', 'name', 'channel', 'shadow']).where('id', '=', selection.tenant).executeTakeFirst();
  if (!tenant) throw new LedgerSelectionError(`no tenant "${selection.tenant}" in the database`);
  const workflows = await replayedWorkflows(db, tenant.id, selection);
  const dependsOn = await dependenciesAmong(db, workflows);
  if (workflows.length === 0) {
    throw new LedgerSelectionError(selection.workflow ? `no monitored workflow "${selection.workflow}" in tenant "${tenant.id}"` : `tenant "${tenant.id}" has no monitored workflows`);
  }

  const notes: string[] = workflows.filter((w) => !w.enabled).map((w) => `${w.name} is disabled now (removed from the file, renamed or deleted); its runs in the period are replayed`);
  // An alert open at `since` is rebuilt from the streak that opened it: the replay starts earlier (a lead-in).
  const lead = replayStart(selection.since, selection.until, await openAlertsAt(db, workflows, selection.since), MAX_REPLAY_SPAN_MS);
  const since = lead.start;
  if (lead.rebuilt.length > 0) notes.push(`alerts open at the start (${lead.rebuilt.join(', ')}) are rebuilt from ${since.toISOString()}, where their failures began`);
  if (lead.cut.length > 0) notes.push(`alerts open at the start whose failures began more than 31 days before the end (${lead.cut.join(', ')}) are rebuilt from ${since.toISOString()} only, and may open later than they did`);

  const ids = workflows.map((w) => w.id);
  const tickless = await db
    .selectFrom('runs')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('workflowId', 'in', ids)
    .where('tick', 'is', null)
    .where('originalRunId', 'is', null)
    .where('trigger', '!=', 'manual')
    .where((eb) => eb.fn.coalesce('startedAt', 'createdAt'), '>=', since)
    .where((eb) => eb.fn.coalesce('startedAt', 'createdAt'), '<=', selection.until)
    .executeTakeFirstOrThrow();

  const { outcomes, missingIn, skipped, manualTicks, unrecorded } = await foldLedgerTicks(db, workflows, since, selection.until);
  const channel = tenant.channel ?? NO_CHANNEL;
  const actions = await manualRunActions(db, workflows, channel, since, selection.until);
  const maintenance = await maintenanceWindows(db, tenant.id, workflows, since, selection.until);

  const external = Number(tickless.n);
  if (external > 0) notes.push(`${external} external run(s) without a tick are not replayed`);
  if (actions.length > 0) notes.push(`${actions.length} manual run(s) are replayed as Run now in ${channel} when they started`);
  if (manualTicks > 0) notes.push(`${manualTicks} manual run(s) on a tick are not replayed`);
  if (skipped > 0) notes.push(`${skipped} tick(s) skipped while the bot was down are replayed as successes`);
  for (const [name, n] of unrecorded) notes.push(`${n} tick(s) of ${name} have no run in the ledger (paused, disabled or not watched then) and are replayed as successes`);

  const baseline = await baselinePolicies(db, workflows, { since, until: selection.until });
  notes.push(...baseline.notes);
  const policies = Object.fromEntries(workflows.map((w) => [w.name, baseline.overrides.get(w.id) ?? {}]));
  const scenario: ScenarioInput = {
    description: `${tenant.name}${selection.workflow ? ` / ${selection.workflow}` : ''}: the ledger from ${selection.since.toISOString()} to ${selection.until.toISOString()}`,
    start: since.toISOString(),
    until: selection.until.toISOString(),
    ...(selection.platformChannel && selection.platformChannel !== tenant.channel ? { platformChannel: selection.platformChannel } : {}),
    // Shadow as it is now, not as it was (a switch during the period is not replayed): who hears, which upstream holds a downstream back.
    tenants: [{ id: tenant.id, name: tenant.name, channel, ...(tenant.shadow ? { shadow: true } : {}) }],
    workflows: workflows.map((w) => ({
      tenant: tenant.id,
      name: w.name,
      cron: w.cron,
      timezone: w.timezone,
      policy: policies[w.name]!,
      ...(dependsOn.get(w.id)?.length ? { dependsOn: dependsOn.get(w.id) } : {}),
      ...(w.shadow ? { shadow: true } : {}),
      // A tick that was never started can only be played by an outside scheduler.
      mode: missingIn.has(w.id) ? 'observed' : w.mode,
    })),
    outcomes,
    ...(actions.length ? { actions } : {}),
    ...(maintenance.length ? { maintenance } : {}),
    ...(baseline.changes.length ? { policyChanges: baseline.changes } : {}),
  };
  return { scenario, policies, notes };
}

/**
 * Each workflow's overrides as they were at `since`: those of its policy
 * version in force then (src/domain/policy-version.ts), so the baseline is the
 * period as it was decided, not under today's overrides; and each change of
 * its overrides inside the period, which the baseline replays at the moment
 * it was made. A workflow with no version recorded keeps its overrides of
 * today. A version that changed only the derived defaults (a new release) is
 * not a change of overrides and is left out.
 */
async function baselinePolicies(
  db: Db,
  workflows: { id: number; name: string; policy: PolicyOverrides | null }[],
  selection: Pick<LedgerSelection, 'since' | 'until'>,
): Promise<{ overrides: Map<number, PolicyOverrides>; changes: PolicyChangeInput[]; notes: string[] }> {
  const rows = await db
    .selectFrom('policyVersions')
    .select(['workflowId', 'version', 'changedAt', 'policy'])
    .where('workflowId', 'in', workflows.map((w) => w.id))
    .execute();
  const versions = new Map<number, RecordedVersion<PolicyOverrides>[]>();
  for (const r of rows) {
    const overrides = ((r.policy as { overrides?: PolicyOverrides } | null)?.overrides ?? {}) as PolicyOverrides;
    versions.set(r.workflowId, [...(versions.get(r.workflowId) ?? []), { version: r.version, changedAt: r.changedAt, overrides }]);
  }
  const overrides = new Map<number, PolicyOverrides>();
  const changes: PolicyChangeInput[] = [];
  const notes: string[] = [];
  for (const w of workflows) {
    const { inForce, changedDuring } = versionInForceAt(versions.get(w.id) ?? [], selection.since, selection.until);
    overrides.set(w.id, inForce ? inForce.overrides : (w.policy ?? {}));
    let current = JSON.stringify(inForce?.overrides ?? {});
    const own = changedDuring.filter((v) => {
      const next = JSON.stringify(v.overrides);
      const changed = next !== current;
      current = next;
      return changed;
    });
    if (inForce && own.length > 0) {
      changes.push(...own.map((v) => ({ at: v.changedAt.toISOString(), workflow: w.name, policy: v.overrides })));
      const when = own.map((v) => `v${v.version} at ${v.changedAt.toISOString()}`).join(', ');
      notes.push(`${w.name}: its policy changed during the period (${when}); the baseline starts under v${inForce.version} and follows each change when it was made`);
    }
  }
  return { overrides, changes, notes };
}

/** Each workflow's upstreams among the replayed ones, by name (the replay holds one tenant). */
async function dependenciesAmong(db: Db, workflows: { id: number; name: string }[]): Promise<Map<number, string[]>> {
  const ids = workflows.map((w) => w.id);
  const out = new Map<number, string[]>();
  if (ids.length === 0) return out;
  const rows = await db.selectFrom('workflowDependencies').selectAll().where('workflowId', 'in', ids).where('upstreamId', 'in', ids).execute();
  for (const r of rows) out.set(r.workflowId, [...(out.get(r.workflowId) ?? []), workflows.find((w) => w.id === r.upstreamId)!.name]);
  return out;
}
