import type { Transaction, Updateable } from 'kysely';
import type { Alert, AlertsTable, Database, OwnerTeam, Tenant, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { decideReassign } from '../domain/ownership.js';
import { silenceInTheWay, silenceState } from '../domain/silence.js';
import { recordAlertEvent, releaseHeldNotifications } from './alert-events.js';
import { unansweredReminders } from './reminders.js';
import type { Scope } from './alert-queries.js';

export type { Scope } from './alert-queries.js';

/**
 * The human actions on an alert (Slack buttons, slash commands, the API).
 * Each is one transaction: lock the alert, check scope and state, change it,
 * record an alert_event with its outbox rows.
 */

export interface Actor {
  /** A Slack user id like U123, or 'api:<tenant>' / 'replay'. */
  user: string;
  channel?: string;
}

export type ActionResult =
  /** `confirmed`: the owner took an alert they already own, an answer to its reminders (owner_confirmed). */
  | { kind: 'ok'; alert: Alert; confirmed?: true }
  /** No such alert, or outside the scope: existence is never leaked across tenants. */
  | { kind: 'not_found' }
  | { kind: 'not_open'; alert: Alert }
  | { kind: 'already_owned'; alert: Alert; by: string }
  /** A reassign naming the team, person and note the alert already has (src/domain/ownership.ts decideReassign), or its owner taking it again with no reminder to answer: nothing changed. */
  | { kind: 'unchanged'; alert: Alert }
  /** A click's silence found one already in force (src/domain/silence.ts silenceInTheWay): nothing changed. */
  | { kind: 'already_silenced'; alert: Alert; by: string; until: Date | 'resolved' };

export class InvalidActionInput extends Error {
  constructor(
    readonly field: string,
    readonly value: unknown,
    reason: string,
  ) {
    super(`${field}=${JSON.stringify(value)}: ${reason}`);
    this.name = 'InvalidActionInput';
  }
}

interface Locked {
  alert: Alert;
  workflow: Workflow;
  tenant: Tenant;
}

/** Locks the alert row; undefined when it does not exist or is outside the scope. */
async function lockAlert(trx: Transaction<Database>, alertId: number, scope: Scope): Promise<Locked | undefined> {
  const alert = await trx.selectFrom('alerts').selectAll().where('id', '=', alertId).forUpdate().executeTakeFirst();
  if (!alert) return undefined;
  const workflow = await trx.selectFrom('workflows').selectAll().where('id', '=', alert.workflowId).executeTakeFirstOrThrow();
  if (scope.tenantId !== undefined && workflow.tenantId !== scope.tenantId) return undefined;
  const tenant = await trx.selectFrom('tenants').selectAll().where('id', '=', workflow.tenantId).executeTakeFirstOrThrow();
  return { alert, workflow, tenant };
}

async function saveAlert(trx: Transaction<Database>, id: number, changes: Updateable<AlertsTable>): Promise<Alert> {
  return trx.updateTable('alerts').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

type Action<I, R> = (trx: Transaction<Database>, locked: Locked, input: I, now: Date) => Promise<R>;

function alertAction<I extends { alertId: number; actor: Actor; scope: Scope }, R>(act: Action<I, R>) {
  return (deps: Pick<Deps, 'db' | 'clock' | 'config'>, input: I): Promise<R | { kind: 'not_found' }> => {
    const now = deps.clock.now();
    return deps.db.transaction().execute(async (trx) => {
      const locked = await lockAlert(trx, input.alertId, input.scope);
      if (!locked) return { kind: 'not_found' as const };
      return act(trx, locked, input, now);
    });
  };
}

function ownerData(before: Alert, after: Alert, note: string | null) {
  return {
    fromTeam: before.ownerTeam,
    fromUser: before.ownerUser,
    toTeam: after.ownerTeam,
    toUser: after.ownerUser,
    note,
    acknowledged: after.acknowledgedAt !== null,
  };
}

/**
 * Acknowledges the alert for the actor: they own it now, and it no longer
 * escalates on its own. Its owner taking it again after a reminder is their
 * answer to the reminders (src/domain/escalation.ts reminderDue); without
 * one since they last acted it changes nothing. The answer, an
 * `owner_confirmed` event of theirs, starts the unanswered count over, and
 * reminded_at = now the reminder period; acknowledged_at stays when they took it (the tenant's
 * ownershipExpiresAfter counts from there).
 */
export const takeOwnership = (deps: Pick<Deps, 'db' | 'clock' | 'config'>, input: { alertId: number; actor: Actor; scope: Scope }) =>
  alertAction<typeof input, ActionResult>(async (trx, { alert, tenant }, { actor }, now) => {
    if (alert.status !== 'open') return { kind: 'not_open', alert };
    if (alert.acknowledgedAt && alert.ownerUser && alert.ownerUser !== actor.user) return { kind: 'already_owned', alert, by: alert.ownerUser };
    if (alert.acknowledgedAt && alert.ownerUser === actor.user) {
      // Nothing to answer (no reminder since they took it or last acted: a double click, a retried request): nothing changes.
      if (!(await unansweredReminders(trx, [alert.id])).get(alert.id)) return { kind: 'unchanged', alert };
      const next = await saveAlert(trx, alert.id, { remindedAt: now, updatedAt: now });
      await recordAlertEvent(trx, { alert: next, tenant, kind: 'owner_confirmed', actor: actor.user, data: { ownerUser: actor.user }, now, config: deps.config });
      return { kind: 'ok', alert: next, confirmed: true };
    }
    const next = await saveAlert(trx, alert.id, { ownerUser: actor.user, acknowledgedBy: actor.user, acknowledgedAt: now, updatedAt: now });
    await recordAlertEvent(trx, { alert: next, tenant, kind: 'owner_changed', actor: actor.user, data: ownerData(alert, next, next.ownerNote), now, config: deps.config });
    return { kind: 'ok', alert: next };
  })(deps, input);

/**
 * Gives the alert back: no owner user, not acknowledged, so the escalation
 * clock sees it again. Someone else's ownership is released only when the
 * caller says the actor may (`mayReleaseOthers`, from src/domain/rights.ts);
 * the check is made here, on the locked row, so an owner change between the
 * click and the release cannot slip through. Callers without a rights model
 * (the API, the replay) leave it out and may.
 */
export const releaseOwnership = (deps: Pick<Deps, 'db' | 'clock' | 'config'>, input: { alertId: number; actor: Actor; scope: Scope; mayReleaseOthers?: boolean }) =>
  alertAction<typeof input, ActionResult | { kind: 'owned_by_other'; alert: Alert; by: string }>(async (trx, { alert, tenant }, { actor, mayReleaseOthers }, now) => {
    if (alert.status !== 'open') return { kind: 'not_open', alert };
    if (!alert.ownerUser && !alert.acknowledgedAt) return { kind: 'ok', alert };
    if (mayReleaseOthers === false && alert.ownerUser && alert.ownerUser !== actor.user) return { kind: 'owned_by_other', alert, by: alert.ownerUser };
    // reminded_at: a critical alert left unowned pages its on-call again a period after the release (reminderDue).
    const next = await saveAlert(trx, alert.id, { ownerUser: null, acknowledgedBy: null, acknowledgedAt: null, remindedAt: now, updatedAt: now });
    await recordAlertEvent(trx, { alert: next, tenant, kind: 'owner_changed', actor: actor.user, data: ownerData(alert, next, next.ownerNote), now, config: deps.config });
    return { kind: 'ok', alert: next };
  })(deps, input);

/**
 * Hands the alert to a team, optionally a named user, with a note (required
 * when handing to the customer: they need to know what to do). A named user
 * counts as an acknowledged owner; a team without a user does not, so an
 * unowned warning can still escalate. Naming the ownership the alert already
 * has is `unchanged`: nothing is recorded or posted.
 */
export const reassign = (
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  input: { alertId: number; actor: Actor; scope: Scope; team: OwnerTeam; user?: string | null; note?: string | null },
) =>
  alertAction<typeof input, ActionResult | { kind: 'invalid'; reason: string }>(async (trx, { alert, tenant }, { actor, team, user, note }, now) => {
    const decision = decideReassign(alert, { team, user, note });
    if (decision.kind === 'invalid') return decision;
    if (alert.status !== 'open') return { kind: 'not_open', alert };
    if (decision.kind === 'unchanged') return { kind: 'unchanged', alert };
    const { to } = decision;
    const next = await saveAlert(trx, alert.id, {
      ownerTeam: to.team as OwnerTeam,
      ownerUser: to.user,
      ownerNote: to.note,
      acknowledgedBy: to.user ? actor.user : null,
      acknowledgedAt: to.user ? now : null,
      updatedAt: now,
    });
    await recordAlertEvent(trx, { alert: next, tenant, kind: 'owner_changed', actor: actor.user, data: ownerData(alert, next, to.note), now, config: deps.config });
    return { kind: 'ok', alert: next };
  })(deps, input);

/**
 * Silences the alert until a time or until it resolves. Events keep being
 * recorded; their notifications are held and told as one summary when the
 * silence ends. The `silenced` event itself is delivered. `replace: false`
 * (a button) leaves a silence already in force as it is and says whose it is;
 * otherwise (a command, the API) the new silence replaces it.
 */
export const silence = (
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  input: { alertId: number; actor: Actor; scope: Scope; until: Date | 'resolved'; reason?: string | null; replace?: boolean },
) =>
  alertAction<typeof input, ActionResult>(async (trx, { alert, tenant }, { actor, until, reason, replace }, now) => {
    if (until !== 'resolved' && !(until instanceof Date && until.getTime() > now.getTime())) {
      throw new InvalidActionInput('until', until instanceof Date ? until.toISOString() : until, `must be "resolved" or a time after ${now.toISOString()}`);
    }
    if (alert.status !== 'open') return { kind: 'not_open', alert };
    const held = silenceInTheWay(alert, now, { replace: replace ?? true });
    if (held) return { kind: 'already_silenced', alert, by: held.by, until: held.until };
    const next = await saveAlert(trx, alert.id, {
      silencedUntil: until === 'resolved' ? null : until,
      silencedBy: actor.user,
      silenceReason: reason?.trim() || null,
      // The daily reminder of an "until resolved" silence counts from here (src/domain/escalation.ts).
      ...(until === 'resolved' ? { remindedAt: now } : {}),
      updatedAt: now,
    });
    await recordAlertEvent(trx, {
      alert: next,
      tenant,
      kind: 'silenced',
      actor: actor.user,
      data: { until: until === 'resolved' ? null : until.toISOString(), reason: next.silenceReason },
      now,
      config: deps.config,
    });
    return { kind: 'ok', alert: next };
  })(deps, input);

/** Ends a silence now; the held notifications become one `unsilenced` event with their summary. */
export const unsilence = (deps: Pick<Deps, 'db' | 'clock' | 'config'>, input: { alertId: number; actor: Actor; scope: Scope }) =>
  alertAction<typeof input, ActionResult>(async (trx, { alert, tenant }, { actor }, now) => {
    if (alert.status !== 'open') return { kind: 'not_open', alert };
    if (!silenceState(alert, now).silenced) return { kind: 'ok', alert };
    const next = await endSilence(trx, alert, tenant, actor.user, 'unsilenced', now, deps.config);
    return { kind: 'ok', alert: next };
  })(deps, input);

/**
 * Clears the silence columns, turns held rows into skipped ones and records
 * one `unsilenced` event carrying what they said. Shared with the escalation
 * clock, which ends silences whose time has passed.
 */
export async function endSilence(
  trx: Transaction<Database>,
  alert: Alert,
  tenant: Pick<Tenant, 'channel'>,
  actor: string | null,
  why: 'unsilenced' | 'expired',
  now: Date,
  config: Deps['config'],
): Promise<Alert> {
  const next = await saveAlert(trx, alert.id, { silencedUntil: null, silencedBy: null, silenceReason: null, updatedAt: now });
  const summary = await releaseHeldNotifications(trx, next);
  await recordAlertEvent(trx, {
    alert: next,
    tenant,
    kind: 'unsilenced',
    actor,
    data: { why, silencedBy: alert.silencedBy, silencedUntil: alert.silencedUntil?.toISOString() ?? null, summary },
    now,
    config,
  });
  return next;
}

/** A note on a hand resolve longer than this is refused (it is posted in the thread). */
export const RESOLVE_NOTE_MAX = 2000;

/**
 * Closes the alert by hand, with who and why: the `resolved` event carries
 * `by: 'hand'` and the note (actor = the person). The workflow's history is
 * untouched; its failures are counted again from this `resolved_at`, as
 * after a recovery (src/ledger/history-facts.ts): a new alert opens when the
 * failures of ticks after it reach the threshold.
 * A silence ends with the alert; what it held is summarised in the event.
 */
export const resolveByHand = (deps: Pick<Deps, 'db' | 'clock' | 'config'>, input: { alertId: number; actor: Actor; scope: Scope; note: string }) =>
  alertAction<typeof input, ActionResult | { kind: 'invalid'; reason: string }>(async (trx, { alert, tenant }, { actor, note }, now) => {
    const trimmed = note.trim();
    if (!trimmed) return { kind: 'invalid', reason: 'a note is required: say why the alert can be closed by hand' };
    if (trimmed.length > RESOLVE_NOTE_MAX) return { kind: 'invalid', reason: `the note is ${trimmed.length} characters; keep it under ${RESOLVE_NOTE_MAX}` };
    if (alert.status !== 'open') return { kind: 'not_open', alert };
    const next = await saveAlert(trx, alert.id, { status: 'resolved', resolvedAt: now, healthyStreak: 0, updatedAt: now });
    const held = alert.silencedBy ? await releaseHeldNotifications(trx, next) : null;
    await recordAlertEvent(trx, {
      alert: next,
      tenant,
      kind: 'resolved',
      actor: actor.user,
      data: { by: 'hand', note: trimmed, durationSeconds: Math.round((now.getTime() - alert.openedAt.getTime()) / 1000), heldWhileSilenced: held },
      now,
      config: deps.config,
    });
    return { kind: 'ok', alert: next };
  })(deps, input);
