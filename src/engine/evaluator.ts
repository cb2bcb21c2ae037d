import { sql, type Transaction } from 'kysely';
import type { Alert, AlertEvent, Database, Run, Tenant, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import type { CadenceProfile } from '../domain/cadence.js';
import { evaluateHistory, nextAlertState, type Effect, type HistoryFacts } from '../domain/evaluate.js';
import { failureNotes } from '../domain/fingerprint.js';
import { lateReportOf } from '../domain/tick-match.js';
import type { UnresolvedIncident } from '../domain/pagerduty-incident.js';
import { recordAlertEvents, releaseHeldNotifications, type EventInput, type RoutingFacts } from '../ledger/alert-events.js';
import { loadHistoryFacts } from '../ledger/history-facts.js';
import { checkedRunsUpdate, type CheckedRun } from '../ledger/checked-runs.js';
import { openAlerts, openedData } from './alert-openings.js';
import { findBlocked, linkOpenDownstreams, outlivedData, recordBlocks, type Blocked } from './upstream-blocks.js';
import { prepared } from '../db/prepared.js';

export interface EvaluationTarget {
  workflow: Workflow;
  tenant: Tenant;
  profile: CadenceProfile;
  /** Manual runs that ended in this batch: the open alert hears how they went. */
  finishedManualRuns: Run[];
  /** Ticks of an observed workflow reported after their grace, in this batch: a recovery they bring says so (`lateReportOf`). */
  lateTicks?: Run[];
  /** Reported runs outside every tick whose note says why (`utcCrontabNote`, `lateStartNote`), in this batch: a recovery they bring says it too. */
  notedOutsideTicks?: Run[];
  /**
   * Whether the workflow has upstreams / downstreams, when the caller read it
   * with the locks that stand for them (the poller's claim): a batch without
   * any dependency sends no statement about them. Unknown: asked of the database.
   */
  hasUpstreams?: boolean;
  hasDownstreams?: boolean;
}

type EvaluatorDeps = Pick<Deps, 'config' | 'launchers'>;
type FlappingEffect = Extract<Effect, { type: 'flapping' }>;
type MainEffect = Exclude<Effect, FlappingEffect>;

/** `destination configuredBy dedupKey` (`-` when not recorded): neither a destination id nor `configuredBy` has a space in it. */
function incidentOf(row: string): UnresolvedIncident {
  const [destination = '', by = '-'] = row.split(' ', 2);
  const dedupKey = row.slice(destination.length + by.length + 2);
  return { destination, dedupKey, ...(by === 'tenant' || by === 'platform' ? { configuredBy: by } : {}) };
}

/**
 * Evaluates workflows whose rows the caller has already locked (`for update`
 * on the workflow row serialises evaluations of one workflow across replicas,
 * which is what keeps "one open alert per workflow" true without leaning on
 * the unique index).
 *
 * Set-based: however many workflows the batch holds, it costs three
 * statements: open alerts (locked, with who has heard of each; it also
 * writes the poller's output checks), history facts, and one that writes
 * the alerts that open, the alerts that change, the events and their
 * outbox rows (`writeAlertsAndEvents`; with the storm claims after it when
 * alerts open in a Slack channel). The decision
 * between them is the pure `evaluateHistory`. Only a silenced alert that
 * resolves adds statements of its own (its held rows are summarised into the
 * recovery, and routing is read again after them), and so does a batch that
 * holds a downstream back or opens an upstream's alert (`tellDependencies`). True when it recorded
 * events (the outbox may have rows to send once the caller commits).
 * `checked`: claimed rows the poller's output checks changed and has not
 * written yet; the first statement writes them, before history reads them.
 */
export async function evaluateWorkflows(trx: Transaction<Database>, deps: EvaluatorDeps, targets: EvaluationTarget[], now: Date, checked: CheckedRun[] = []): Promise<boolean> {
  if (targets.length + checked.length === 0) return false;
  const ids = targets.map((t) => t.workflow.id);
  const { open, seenGroups, heard, incidents } = await lockOpenAlerts(trx, ids, checked);
  if (targets.length === 0) return false;
  const openBy = new Map(open.map((a) => [a.workflowId, a]));
  const facts = await loadHistoryFacts(trx, ids, [...openBy.keys()]);

  const decided = targets.map((target) => decide(target, openBy.get(target.workflow.id) ?? null, facts.get(target.workflow.id)!, now, seenGroups));

  const blocked = await holdBack(trx, decided, facts, now);
  const opening = openAlerts(
    deps,
    decided.flatMap((d) => (d.effect?.type === 'open' ? [{ target: d.target, effect: d.effect, upstreamAlertId: facts.get(d.target.workflow.id)!.upstreamResolved?.alertId ?? null }] : [])),
    now,
  );
  const opened = new Map(opening.map((a) => [a.workflowId, a.alert]));
  const changed = byId(decided.flatMap((d) => changedAlert(d, now)));

  const events: EventInput[] = [];
  let routingRead = true;
  for (const { target, alert, effect, flapping } of decided) {
    const { tenant } = target;
    const event = (a: Alert, kind: EventInput['kind'], data: Record<string, unknown>, actor: string | null = null) => events.push({ alert: a, tenant, kind, actor, data, now, config: deps.config });
    if (alert) {
      for (const run of target.finishedManualRuns) event(alert, 'run_finished', { runId: run.id, status: run.status, error: run.error, requestedBy: run.requestedBy }, run.requestedBy);
    }
    // After the failure or streak it came with: the note reads as the consequence.
    const flappingNote = () => {
      if (alert && flapping) event(changed.get(alert.id)!, 'flapping', { transitions: flapping.transitions, window: flapping.window, recoverAfter: flapping.recoverAfter });
    };
    if (!effect) {
      flappingNote();
      continue;
    }
    switch (effect.type) {
      case 'open': {
        event(opened.get(target.workflow.id)!, 'opened', openedData(target, effect, !deps.launchers(target.workflow)));
        const outlived = facts.get(target.workflow.id)!.upstreamResolved;
        if (outlived) event(opened.get(target.workflow.id)!, 'outlived_upstream', await outlivedData(trx, target.workflow.id, outlived.alertId));
        break;
      }
      case 'failure_recorded': {
        const next = changed.get(alert!.id)!;
        const { failure, groupChanged } = effect;
        // A new group is called out once; a new "too fast" says why a success counted (issue 16), once too.
        const notes = failureNotes(failure, groupChanged);
        if (notes.includes('error_group_changed')) event(next, 'error_group_changed', { from: groupChanged!.from, to: groupChanged!.to, error: failure.error, stage: failure.stage, runId: failure.runId });
        event(next, 'failure_recorded', { consecutiveFailures: effect.failures, error: failure.error, errorGroup: failure.errorGroup, runId: failure.runId, missed: failure.status === 'missed' });
        if (notes.includes('too_fast')) event(next, 'too_fast', { runId: failure.runId, error: failure.error, errorGroup: failure.errorGroup });
        break;
      }
      case 'healthy_streak':
        event(changed.get(alert!.id)!, 'healthy_streak', { streak: effect.streak, of: effect.of });
        break;
      case 'streak_reset':
        break;
      case 'resolve': {
        const next = changed.get(alert!.id)!;
        // A silence ends with the alert: what it held is summarised in the recovery itself.
        const held = alert!.silencedBy ? await releaseHeldNotifications(trx, next) : null;
        // Released rows no longer count as heard: routing is read again after them.
        if (held) routingRead = false;
        event(next, 'resolved', resolvedData(target, effect, held));
        break;
      }
    }
    flappingNote();
  }
  const routing = routingRead ? routingOf(targets, heard, incidents) : undefined;
  const written = await recordAlertEvents(trx, events, { routing, alerts: { opening, changed: [...changed.values()] } });
  const told = await tellDependencies(trx, deps, { blocked, opened: withRealIds(opened, events, written), targets, now });
  return events.length + told > 0;
}

/**
 * The open alerts of the workflows, locked, with the destinations that have
 * heard each (a row not skipped) and the error groups each has carried: one statement, which also writes the
 * claimed rows the output checks changed (a data-modifying CTE; the history
 * facts, a later statement, see them).
 */
async function lockOpenAlerts(
  trx: Transaction<Database>,
  workflowIds: number[],
  checked: CheckedRun[],
): Promise<{ open: Alert[]; seenGroups: Map<number, (string | null)[]> } & Pick<RoutingFacts, 'heard' | 'incidents'>> {
  const { rows } = await sql<Alert & { heardBy: string[]; incidents: string[]; seenGroups: (string | null)[] }>`${prepared}
    with checked as (${checkedRunsUpdate(checked)} returning 1)
    select a.*, array(select distinct n.destination from notifications n where n.alert_id = a.id and n.status <> 'skipped') as heard_by,
      array(
        select distinct n.destination || ' ' || coalesce(n.result->>'configuredBy', '-') || ' ' || (n.result->>'dedupKey') from notifications n
        where n.alert_id = a.id and n.status = 'sent' and n.destination like 'pagerduty:%' and n.result ? 'dedupKey'
      ) as incidents,
      array(
        select distinct case e.kind when 'error_group_changed' then e.data->>'to' else e.data->>'errorGroup' end from alert_events e
        where e.alert_id = a.id and e.kind in ('opened', 'error_group_changed', 'too_fast')
      ) as seen_groups
    from alerts a
    where a.workflow_id = any(${workflowIds}::int[]) and a.status = 'open'
    for update of a
  `.execute(trx);
  const open = rows.map(({ heardBy: _heardBy, incidents: _incidents, seenGroups: _seenGroups, ...alert }) => alert);
  const seenGroups = new Map(rows.map((r) => [r.id, r.seenGroups]));
  return {
    open,
    seenGroups,
    heard: rows.flatMap((r) => r.heardBy.map((destination) => ({ alertId: r.id, destination }))),
    incidents: rows.flatMap((r) => r.incidents.map((i) => ({ alertId: r.id, ...incidentOf(i) }))),
  };
}

/**
 * Held back by an open upstream incident (upstream-blocks.ts): a workflow
 * whose upstream has an open alert, or opens one in this batch, opens none.
 */
async function holdBack(trx: Transaction<Database>, decided: Decision[], facts: Map<number, HistoryFacts>, now: Date): Promise<Blocked[]> {
  const candidates = decided.map(({ target: { workflow }, alert, effect }) => ({ workflowId: workflow.id, hasOpenAlert: !!alert, opens: effect?.type === 'open', newestFailure: facts.get(workflow.id)!.newestFailure }));
  // Only a workflow with upstreams can be held back (an upstream opening in this batch is one of its upstreams).
  if (!decided.some((d) => d.target.hasUpstreams !== false)) return [];
  const blocked = await findBlocked(trx, candidates, now);
  for (const d of decided) if (d.effect?.type === 'open' && blocked.some((b) => b.workflowId === d.target.workflow.id)) d.effect = undefined;
  return blocked;
}

/**
 * After the openings they follow (an upstream's thread starts with its own
 * root): the "also affected" lists and the links of open downstream alerts.
 * They write against the real ids of this batch's openings (foreign keys), so
 * they run after the statement that inserted them, and their events are a
 * second `recordAlertEvents`. The number of events recorded. Without
 * dependencies in the batch (the claim says so), no statement.
 */
async function tellDependencies(
  trx: Transaction<Database>,
  deps: Pick<Deps, 'config'>,
  b: { blocked: Blocked[]; opened: Map<number, Alert>; targets: EvaluationTarget[]; now: Date },
): Promise<number> {
  // A workflow the claim found without downstreams has no open downstream alert to link.
  const noDownstreams = new Set(b.targets.flatMap((t) => (t.hasDownstreams === false ? [t.workflow.id] : [])));
  const events: EventInput[] = [];
  const told = (alert: Alert, tenant: Pick<Tenant, 'channel'>, kind: EventInput['kind'], data: Record<string, unknown>) => events.push({ alert, tenant, kind, data, now: b.now, config: deps.config });
  await recordBlocks(trx, b.blocked, b.opened, b.now, told);
  await linkOpenDownstreams(trx, new Map([...b.opened].filter(([workflowId]) => !noDownstreams.has(workflowId))), b.now, told);
  await recordAlertEvents(trx, events);
  return events.length;
}

/** This batch's openings under the ids the write gave them: each one's `opened` event names it. */
function withRealIds(opened: Map<number, Alert>, events: EventInput[], written: AlertEvent[]): Map<number, Alert> {
  const real = new Map<number, Alert>();
  events.forEach((e, i) => {
    if (e.kind === 'opened' && e.alert.id < 0) real.set(e.alert.workflowId, { ...opened.get(e.alert.workflowId)!, id: written[i]!.alertId });
  });
  return real;
}

/** A recovery's event data; one brought by a tick's late report says how late (the thread advises a grace), one by a run outside every tick why it was. */
function resolvedData(target: EvaluationTarget, effect: Extract<Effect, { type: 'resolve' }>, held: unknown): Record<string, unknown> {
  const lateRun = target.lateTicks?.find((r) => r.id === effect.runId);
  const lateReport = lateRun && lateReportOf(lateRun, target.profile.graceSeconds);
  const outsideTicks = target.notedOutsideTicks?.find((r) => r.id === effect.runId)?.outcomeNote;
  const { runId, durationSeconds, trigger, successes, recoverAfter } = effect;
  return { ...(lateReport ? { lateReport } : {}), ...(outsideTicks ? { outsideTicks } : {}), runId, durationSeconds, trigger, successes, recoverAfter, heldWhileSilenced: held };
}

type Decision = { target: EvaluationTarget; alert: Alert | null; effect: MainEffect | undefined; flapping: FlappingEffect | undefined };

/** What the domain rules say follows for one workflow: at most one main effect, and a flapping note. */
function decide(target: EvaluationTarget, alert: Alert | null, facts: HistoryFacts, now: Date, seenGroups: Map<number, (string | null)[]>): Decision {
  const { cron, timezone, paused } = target.workflow;
  const effects = evaluateHistory({
    facts,
    alert: alert && { ...alert, seenGroups: seenGroups.get(alert.id) ?? [] },
    policy: target.profile,
    cadenceSeconds: target.profile.cadenceSeconds,
    schedule: { cron, timezone },
    paused,
    now,
  });
  const flapping = effects.find((e): e is FlappingEffect => e.type === 'flapping');
  return { target, alert, effect: effects.find((e): e is MainEffect => e.type !== 'flapping'), flapping };
}

/** The open alert's next state when the decision changes it (none otherwise): the domain's transition (nextAlertState). */
function changedAlert({ alert, effect, flapping }: Decision, now: Date): Alert[] {
  if (!alert || (!effect && !flapping)) return [];
  return [nextAlertState(alert, [...(effect ? [effect] : []), ...(flapping ? [flapping] : [])], now)];
}

/** What routing needs of the batch, read with it: no statement of its own. */
function routingOf(targets: EvaluationTarget[], heard: RoutingFacts['heard'], incidents: RoutingFacts['incidents']): RoutingFacts {
  return {
    workflows: targets.map(({ workflow, tenant }) => ({ id: workflow.id, destinations: tenant.destinations, policyVersion: workflow.policyVersion, shadow: workflow.shadow, tenantShadow: tenant.shadow })),
    heard,
    incidents,
  };
}

function byId(next: Alert[]): Map<number, Alert> {
  return new Map(next.map((a) => [a.id, a]));
}
