import { sql, type Transaction } from 'kysely';
import type { Alert, AlertEvent, Database, Run, Tenant, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import type { CadenceProfile } from '../domain/cadence.js';
import { evaluateHistory, nextAlertState, type Effect, type HistoryFacts } from '../domain/evaluate.js';
import { escalationMention } from '../domain/escalation.js';
import { retriesAllowed } from '../domain/retry-budget.js';
import { recordAlertEvents, releaseHeldNotifications, type EventInput, type RoutingFacts } from '../ledger/alert-events.js';
import { provisionalAlertId } from '../ledger/event-writes.js';
import { loadHistoryFacts } from '../ledger/history-facts.js';
import { findBlocked, linkOpenDownstreams, outlivedData, recordBlocks, type Blocked } from './upstream-blocks.js';

export interface EvaluationTarget {
  workflow: Workflow;
  tenant: Tenant;
  profile: CadenceProfile;
  /** Manual runs that ended in this batch: the open alert hears how they went. */
  finishedManualRuns: Run[];
}

const LOG_EXCERPT_IN_EVENT = 4000;

type FlappingEffect = Extract<Effect, { type: 'flapping' }>;
type MainEffect = Exclude<Effect, FlappingEffect>;

/**
 * Evaluates workflows whose rows the caller has already locked (`for update`
 * on the workflow row serialises evaluations of one workflow across replicas,
 * which is what keeps "one open alert per workflow" true without leaning on
 * the unique index).
 *
 * Set-based: however many workflows the batch holds, it costs three
 * statements: open alerts (locked, with who has heard of each), history
 * facts, and one that writes the alerts that open, the alerts that change,
 * the events and their outbox rows (`writeAlertsAndEvents`). The decision
 * between them is the pure `evaluateHistory`. Only a silenced alert that
 * resolves adds statements of its own (its held rows are summarised into the
 * recovery, and routing is read again after them). True when it recorded
 * events (the outbox may have rows to send once the caller commits).
 */
export async function evaluateWorkflows(trx: Transaction<Database>, deps: Pick<Deps, 'config' | 'launchers'>, targets: EvaluationTarget[], now: Date): Promise<boolean> {
  if (targets.length === 0) return false;
  const ids = targets.map((t) => t.workflow.id);
  const { open, heard } = await lockOpenAlerts(trx, ids);
  const openBy = new Map(open.map((a) => [a.workflowId, a]));
  const facts = await loadHistoryFacts(trx, ids, [...openBy.keys()]);

  const decided = targets.map((target) => decide(target, openBy.get(target.workflow.id) ?? null, facts.get(target.workflow.id)!, now));

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
        if (groupChanged) event(next, 'error_group_changed', { from: groupChanged.from, to: groupChanged.to, error: failure.error, stage: failure.stage, runId: failure.runId });
        event(next, 'failure_recorded', { consecutiveFailures: effect.failures, error: failure.error, errorGroup: failure.errorGroup, runId: failure.runId, missed: failure.status === 'missed' });
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
        event(next, 'resolved', {
          runId: effect.runId,
          durationSeconds: effect.durationSeconds,
          trigger: effect.trigger,
          successes: effect.successes,
          recoverAfter: effect.recoverAfter,
          heldWhileSilenced: held,
        });
        break;
      }
    }
    flappingNote();
  }
  const routing: RoutingFacts = {
    workflows: targets.map(({ workflow, tenant }) => ({ id: workflow.id, destinations: tenant.destinations, policyVersion: workflow.policyVersion, shadow: workflow.shadow, tenantShadow: tenant.shadow })),
    heard,
  };
  const written = await recordAlertEvents(trx, events, { routing: routingRead ? routing : undefined, alerts: { opening, changed: [...changed.values()] } });
  const told = await tellDependencies(trx, deps, { blocked, opened: withRealIds(opened, events, written), now });
  return events.length + told > 0;
}

/**
 * The open alerts of the workflows, locked, with the destinations that have
 * heard each (a row not skipped): one statement.
 */
async function lockOpenAlerts(trx: Transaction<Database>, workflowIds: number[]): Promise<{ open: Alert[]; heard: RoutingFacts['heard'] }> {
  const rows = await trx
    .selectFrom('alerts')
    .selectAll('alerts')
    .select(sql<string[]>`array(select distinct n.destination from notifications n where n.alert_id = alerts.id and n.status <> 'skipped')`.as('heardBy'))
    .where('workflowId', 'in', workflowIds)
    .where('status', '=', 'open')
    .forUpdate()
    .execute();
  const open = rows.map(({ heardBy: _heardBy, ...alert }) => alert);
  return { open, heard: rows.flatMap((r) => r.heardBy.map((destination) => ({ alertId: r.id, destination }))) };
}

/**
 * Held back by an open upstream incident (upstream-blocks.ts): a workflow
 * whose upstream has an open alert, or opens one in this batch, opens none.
 */
async function holdBack(trx: Transaction<Database>, decided: Decision[], facts: Map<number, HistoryFacts>, now: Date): Promise<Blocked[]> {
  const candidates = decided.map(({ target: { workflow }, alert, effect }) => ({ workflowId: workflow.id, hasOpenAlert: !!alert, opens: effect?.type === 'open', newestFailure: facts.get(workflow.id)!.newestFailure }));
  const blocked = await findBlocked(trx, candidates, now);
  for (const d of decided) if (d.effect?.type === 'open' && blocked.some((b) => b.workflowId === d.target.workflow.id)) d.effect = undefined;
  return blocked;
}

/**
 * After the openings they follow (an upstream's thread starts with its own
 * root): the "also affected" lists and the links of open downstream alerts.
 * They write against the real ids of this batch's openings (foreign keys), so
 * they run after the statement that inserted them, and their events are a
 * second `recordAlertEvents`. The number of events recorded.
 */
async function tellDependencies(trx: Transaction<Database>, deps: Pick<Deps, 'config'>, b: { blocked: Blocked[]; opened: Map<number, Alert>; now: Date }): Promise<number> {
  const events: EventInput[] = [];
  const told = (alert: Alert, tenant: Pick<Tenant, 'channel'>, kind: EventInput['kind'], data: Record<string, unknown>) => events.push({ alert, tenant, kind, data, now: b.now, config: deps.config });
  await recordBlocks(trx, b.blocked, b.opened, b.now, told);
  await linkOpenDownstreams(trx, b.opened, b.now, told);
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

type Decision = { target: EvaluationTarget; alert: Alert | null; effect: MainEffect | undefined; flapping: FlappingEffect | undefined };

/** What the domain rules say follows for one workflow: at most one main effect, and a flapping note. */
function decide(target: EvaluationTarget, alert: Alert | null, facts: HistoryFacts, now: Date): Decision {
  const { cron, timezone } = target.workflow;
  const effects = evaluateHistory({ facts, alert, policy: target.profile, cadenceSeconds: target.profile.cadenceSeconds, schedule: { cron, timezone }, now });
  const flapping = effects.find((e): e is FlappingEffect => e.type === 'flapping');
  return { target, alert, effect: effects.find((e): e is MainEffect => e.type !== 'flapping'), flapping };
}

/** The open alert's next state when the decision changes it (none otherwise): the domain's transition (nextAlertState). */
function changedAlert({ alert, effect, flapping }: Decision, now: Date): Alert[] {
  if (!alert || (!effect && !flapping)) return [];
  return [nextAlertState(alert, [...(effect ? [effect] : []), ...(flapping ? [flapping] : [])], now)];
}

/** The `opened` event's data: the failure that opened it and what the alert will do next. */
function openedData(target: EvaluationTarget, effect: Extract<Effect, { type: 'open' }>, noLauncher: boolean): Record<string, unknown> {
  const { failure } = effect;
  return {
    severity: effect.severity,
    consecutiveFailures: effect.failures,
    errorGroup: failure.errorGroup,
    error: failure.error,
    stage: failure.stage,
    runId: failure.runId,
    missed: failure.status === 'missed',
    tick: failure.tick?.toISOString() ?? null,
    logExcerpt: failure.logExcerpt ? failure.logExcerpt.slice(-LOG_EXCERPT_IN_EVENT) : null,
    logUrl: failure.logUrl,
    retries: retriesAllowed(target.profile.retries, !noLauncher),
    noLauncher,
    escalateAt: effect.escalateAt?.toISOString() ?? null,
    // Opening at critical pages the tenant's on-call (when it names anyone), as an escalation to critical does.
    ...(effect.severity === 'critical' ? openingPage(target.tenant) : {}),
  };
}

function openingPage(tenant: Tenant): { mention?: ReturnType<typeof escalationMention> } {
  const mention = escalationMention(null, tenant.oncall ?? {});
  return mention.users.length + mention.groups.length > 0 ? { mention } : {};
}

/**
 * The alerts that open in this batch, as rows to insert and as the alert
 * their events are recorded against, under a provisional id (written with the events, see `writeAlertsAndEvents`).
 */
function openAlerts(
  deps: Pick<Deps, 'launchers'>,
  opening: { target: EvaluationTarget; effect: Extract<Effect, { type: 'open' }>; upstreamAlertId: number | null }[],
  now: Date,
): { workflowId: number; row: Record<string, unknown>; alert: Alert }[] {
  return opening.map(({ target: { workflow, profile }, effect, upstreamAlertId }) => {
    const { failure } = effect;
    const alert: Alert = {
      id: provisionalAlertId(workflow.id),
      workflowId: workflow.id,
      generation: 0,
      status: 'open',
      severity: effect.severity,
      openedAt: now,
      escalatedAt: null,
      escalateAt: effect.escalateAt,
      resolvedAt: null,
      cadenceSeconds: profile.cadenceSeconds,
      policy: snapshotPolicy(profile, !deps.launchers(workflow)),
      policyVersion: workflow.policyVersion,
      consecutiveFailures: effect.failures,
      lastError: failure.error,
      errorGroup: failure.errorGroup,
      errorGroupFirstAt: now,
      errorGroupLastAt: now,
      errorGroupCount: 1,
      stage: failure.stage,
      firstRunId: failure.runId,
      lastRunId: failure.runId,
      ownerTeam: 'engineering',
      ownerUser: null,
      ownerNote: null,
      acknowledgedBy: null,
      acknowledgedAt: null,
      silencedUntil: null,
      silencedBy: null,
      silenceReason: null,
      healthyStreak: 0,
      resolvedByRunId: null,
      updatedAt: now,
      flappingSince: null,
      remindedAt: null,
      upstreamAlertId,
    };
    return { workflowId: workflow.id, row: snakeRow(alert), alert };
  });
}

function snakeRow(alert: Alert): Record<string, unknown> {
  return Object.fromEntries(Object.entries(alert).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));
}

function byId(next: Alert[]): Map<number, Alert> {
  return new Map(next.map((a) => [a.id, a]));
}

/** The policy in force when the alert opened, kept on the alert (editing the workflow mid-incident changes nothing). */
function snapshotPolicy(profile: CadenceProfile, noLauncher: boolean) {
  return {
    retries: profile.retries,
    alertAfter: profile.alertAfter,
    firstSeverity: profile.firstSeverity,
    escalationMultiplier: profile.escalationMultiplier,
    recoverAfter: profile.recoverAfter,
    graceSeconds: profile.graceSeconds,
    timeoutSeconds: profile.timeoutSeconds,
    minRows: profile.minRows,
    escalateAfterFailures: profile.escalateAfterFailures,
    cadenceSeconds: profile.cadenceSeconds,
    derived: profile.derived,
    overrides: profile.overrides,
    noLauncher,
  };
}
