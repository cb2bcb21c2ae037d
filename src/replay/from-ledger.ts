import type { Db } from '../db/connect.js';
import type { PolicyOverrides, Run } from '../db/schema.js';
import { versionInForceAt, type RecordedVersion } from '../domain/policy-version.js';
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
type Attempt = { status: 'succeeded'; rows?: number } | { status: 'failed'; error?: string; stage?: string; rows?: number } | { status: 'missing' };

/** A channel id for a tenant that has none: a scenario needs one to show its threads in. */
const NO_CHANNEL = 'CNOCHANNEL';
const MAX_DURATION_SECONDS = 7 * 86_400;
const MAX_TEXT = 2_000;

export async function scenarioFromLedger(db: Db, selection: LedgerSelection): Promise<LedgerScenario> {
  const tenant = await db.selectFrom('tenants').select(['id', 'name', 'channel']).where('id', '=', selection.tenant).executeTakeFirst();
  if (!tenant) throw new LedgerSelectionError(`no tenant "${selection.tenant}" in the database`);
  let query = db
    .selectFrom('workflows')
    .select(['id', 'name', 'cron', 'timezone', 'policy', 'mode'])
    .where('tenantId', '=', tenant.id)
    .where('enabled', '=', true)
    .where('monitoring', '=', true)
    .orderBy('name');
  if (selection.workflow) query = query.where('name', '=', selection.workflow);
  const workflows = await query.execute();
  const dependsOn = await dependenciesAmong(db, workflows);
  if (workflows.length === 0) {
    throw new LedgerSelectionError(selection.workflow ? `no monitored workflow "${selection.workflow}" in tenant "${tenant.id}"` : `tenant "${tenant.id}" has no monitored workflows`);
  }

  const ids = workflows.map((w) => w.id);
  const runs = await db
    .selectFrom('runs')
    .selectAll()
    .where('workflowId', 'in', ids)
    .where('tick', '>=', selection.since)
    .where('tick', '<=', selection.until)
    .orderBy('workflowId')
    .orderBy('tick')
    .orderBy('attempt')
    .execute();
  const tickless = await db
    .selectFrom('runs')
    .select(['trigger', (eb) => eb.fn.countAll<string>().as('n')])
    .where('workflowId', 'in', ids)
    .where('tick', 'is', null)
    .where('originalRunId', 'is', null)
    .where((eb) => eb.fn.coalesce('startedAt', 'createdAt'), '>=', selection.since)
    .where((eb) => eb.fn.coalesce('startedAt', 'createdAt'), '<=', selection.until)
    .groupBy('trigger')
    .execute();
  const ticklessOf = (manual: boolean) => tickless.filter((r) => (r.trigger === 'manual') === manual).reduce((n, r) => n + Number(r.n), 0);

  const { outcomes, missingIn, skipped, manualTicks } = foldOutcomes(runs, new Map(workflows.map((w) => [w.id, w.name])));
  const manual = manualTicks + ticklessOf(true);

  const notes: string[] = [];
  const external = ticklessOf(false);
  if (external > 0) notes.push(`${external} external run(s) without a tick are not replayed`);
  if (manual > 0) notes.push(`${manual} manual run(s) are not replayed (Slack actions are not in the ledger)`);
  if (skipped > 0) notes.push(`${skipped} tick(s) skipped while the bot was down are replayed as successes`);

  const baseline = await baselinePolicies(db, workflows, selection);
  notes.push(...baseline.notes);
  const policies = Object.fromEntries(workflows.map((w) => [w.name, baseline.overrides.get(w.id) ?? {}]));
  const scenario: ScenarioInput = {
    description: `${tenant.name}${selection.workflow ? ` / ${selection.workflow}` : ''}: the ledger from ${selection.since.toISOString()} to ${selection.until.toISOString()}`,
    start: selection.since.toISOString(),
    until: selection.until.toISOString(),
    ...(selection.platformChannel && selection.platformChannel !== tenant.channel ? { platformChannel: selection.platformChannel } : {}),
    tenants: [{ id: tenant.id, name: tenant.name, channel: tenant.channel ?? NO_CHANNEL }],
    workflows: workflows.map((w) => ({
      tenant: tenant.id,
      name: w.name,
      cron: w.cron,
      timezone: w.timezone,
      policy: policies[w.name]!,
      ...(dependsOn.get(w.id)?.length ? { dependsOn: dependsOn.get(w.id) } : {}),
      // A tick that was never started can only be played by an outside scheduler.
      mode: missingIn.has(w.id) ? 'observed' : w.mode,
    })),
    outcomes,
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

/**
 * Each workflow's decided ticks as scenario outcomes, consecutive ticks that
 * did the same folded into one rule; with what cannot be replayed counted.
 */
function foldOutcomes(runs: Run[], nameOf: Map<number, string>) {
  const ticks = groupTicks(runs);
  const outcomes: NonNullable<ScenarioInput['outcomes']> = [];
  const missingIn = new Set<number>();
  let skipped = 0;
  let manualTicks = 0;
  for (const [workflowId, byTick] of ticks) {
    let open: { key: string; from: Date; to: Date; attempts: Attempt[]; durationSeconds: number } | undefined;
    const flush = () => {
      if (open) outcomes.push({ workflow: nameOf.get(workflowId)!, from: open.from.toISOString(), to: open.to.toISOString(), durationSeconds: open.durationSeconds, attempts: open.attempts });
      open = undefined;
    };
    for (const [tick, attempts] of byTick) {
      const original = attempts[0]!;
      if (original.trigger === 'manual') {
        manualTicks++;
        continue;
      }
      if (original.status === 'skipped') {
        skipped++;
        flush();
        continue;
      }
      if (original.status === 'running' || original.status === 'pending_retry') continue; // not decided yet: nothing to replay
      const scripted = attempts.map(attemptOf);
      if (scripted[0]!.status === 'missing') missingIn.add(workflowId);
      const durationSeconds = durationOf(original);
      const key = JSON.stringify([scripted, durationSeconds]);
      const at = new Date(tick);
      if (open && open.key === key) open.to = at;
      else {
        flush();
        open = { key, from: at, to: at, attempts: scripted, durationSeconds };
      }
    }
    flush();
  }
  return { outcomes, missingIn, skipped, manualTicks };
}

/** workflow id → tick (ms) → the tick's rows, the original first, then its attempts in order. */
function groupTicks(runs: Run[]): Map<number, Map<number, Run[]>> {
  const out = new Map<number, Map<number, Run[]>>();
  const byId = new Map(runs.map((r) => [r.id, r]));
  for (const run of runs) {
    if (run.tick === null) continue;
    const original = run.originalRunId === null ? run : byId.get(run.originalRunId);
    if (!original) continue; // an attempt whose tick row is outside the window
    let ticks = out.get(run.workflowId);
    if (!ticks) out.set(run.workflowId, (ticks = new Map()));
    const t = run.tick.getTime();
    const list = ticks.get(t) ?? [];
    if (run.originalRunId === null) list.unshift(run);
    else list.push(run);
    ticks.set(t, list);
  }
  for (const ticks of out.values()) for (const list of ticks.values()) list.sort((a, b) => a.attempt - b.attempt);
  return out;
}

/** One attempt as the scenario says it: its own outcome, not the tick's verdict written back onto the first row. */
function attemptOf(run: Run): Attempt {
  const status = run.attemptStatus ?? run.status;
  const error = run.attemptError ?? run.error;
  if (status === 'missed') return { status: 'missing' };
  if (status === 'succeeded') return run.rows === null ? { status: 'succeeded' } : { status: 'succeeded', rows: run.rows };
  return {
    status: 'failed',
    ...(error ? { error: error.slice(0, MAX_TEXT) } : {}),
    ...(run.stage ? { stage: run.stage.slice(0, MAX_TEXT) } : {}),
    ...(run.rows !== null ? { rows: run.rows } : {}),
  };
}

/**
 * The run's kept duration, else its end minus its start (rows written without one); unknown (a report
 * with only its end, stored with start = end, or a missed tick) replays as the default minute, not as zero.
 */
function durationOf(run: Run): number {
  const elapsed = run.startedAt && run.finishedAt && run.finishedAt > run.startedAt ? (run.finishedAt.getTime() - run.startedAt.getTime()) / 1000 : null;
  const seconds = run.durationSeconds ?? elapsed;
  return seconds === null ? 60 : Math.min(MAX_DURATION_SECONDS, Math.max(0, Math.round(seconds)));
}
