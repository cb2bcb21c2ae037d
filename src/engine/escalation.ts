import { sql, type Transaction } from 'kysely';
import type { Alert, Database, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { escalationDue, escalationMention, lapseAfterReminders, ownershipExpired, reminderDue } from '../domain/escalation.js';
import { endSilence } from '../ledger/alert-actions.js';
import { recordAlertEvents, type EventInput } from '../ledger/alert-events.js';
import { runMaintenanceClock } from './maintenance-clock.js';
import { alertsAwaitingWindowEnd, workflowsInMaintenance } from './maintenance-rules.js';
import { runStormClock } from './storm-clock.js';

/**
 * The escalation clock (DESIGN.md, core idea 6; issue 13). Each step locks
 * its candidates with `for update skip locked`, asks the pure rule in
 * src/domain/escalation.ts, and changes the rows it says are due in the same
 * transaction: a replica (or a person clicking) already holding a row
 * finishes it, and once committed the row no longer qualifies, so of two
 * replicas exactly one escalates, expires or reminds, once per period.
 * It also ends silences whose time has passed, and runs the maintenance
 * clock first (src/engine/maintenance-clock.ts: recurring occurrences
 * recorded, ended windows told once), so a window that just ended moves its
 * warnings' deadlines before they are judged.
 */
export async function runEscalationClock(deps: Pick<Deps, 'db' | 'clock' | 'config'>): Promise<boolean> {
  const now = deps.clock.now();
  const maintenance = await runMaintenanceClock(deps);
  const ended = await endExpiredSilences(deps, now);
  const expired = await expireOwnerships(deps, now);
  const escalated = await escalateDueWarnings(deps, now);
  const reminded = await sendReminders(deps, now);
  // Storms that settled end (their open alerts get threads of their own); shared causes are called out.
  const storms = await runStormClock(deps, now);
  return maintenance || storms || ended + expired + escalated + reminded > 0;
}

/**
 * When an open unacknowledged warning is due to escalate: escalationDue's
 * rule (src/domain/escalation.ts) in SQL, word for word the expression of the
 * partial index `alerts_escalation_due` (migration 0020), so the claim reads
 * and locks only the due ones through it. The domain rule still decides each
 * locked row.
 */
const ESCALATION_DUE_AT = sql<Date | null>`(case when alerts.consecutive_failures >= escalation_threshold(alerts.policy) then alerts.opened_at else alerts.escalate_at end)`;

type Candidate = {
  alert: Alert;
  channel: string | null;
  oncall: { group?: string; users?: string[] };
  ownershipExpiresAfterSeconds: number | null;
  workflow: Pick<Workflow, 'id' | 'tenantId' | 'maintenance' | 'paused'>;
};

/**
 * Open alerts matching `where`, locked, with what the rules need of their
 * tenant. `due_warning`: the unacknowledged warnings due at `now` only
 * (ESCALATION_DUE_AT), so a replica's pass locks what it will escalate, not
 * every open warning.
 */
async function lockCandidates(trx: Transaction<Database>, where: 'due_warning' | 'owned' | 'owned_or_silenced_until_resolved', now?: Date): Promise<Candidate[]> {
  const rows = await trx
    .selectFrom('alerts')
    .innerJoin('workflows', 'workflows.id', 'alerts.workflowId')
    .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
    .selectAll('alerts')
    .select(['tenants.channel as tenantChannel', 'tenants.oncall as tenantOncall', 'tenants.ownershipExpiresAfterSeconds as tenantExpiry', 'workflows.tenantId as wfTenant', 'workflows.maintenance as wfMaintenance', 'workflows.paused as wfPaused'])
    .where('alerts.status', '=', 'open')
    // A paused or disabled workflow's warning does not escalate (pausing stops the clock; resuming moves the deadline).
    .$if(where === 'due_warning', (q) =>
      q
        .where('alerts.severity', '=', 'warning')
        .where('alerts.acknowledgedAt', 'is', null)
        .where(ESCALATION_DUE_AT, '<=', now!)
        .where('workflows.enabled', '=', true)
        .where('workflows.paused', '=', false),
    )
    .$if(where === 'owned', (q) => q.where('alerts.ownerUser', 'is not', null).where('alerts.acknowledgedAt', 'is not', null).where('tenants.ownershipExpiresAfterSeconds', 'is not', null))
    // A paused workflow reminds nobody (reminderDue decides; this only spares locking its alerts).
    .$if(where === 'owned_or_silenced_until_resolved', (q) =>
      q.where('workflows.paused', '=', false).where((eb) =>
        eb.or([
          eb.and([eb('alerts.ownerUser', 'is not', null), eb('alerts.acknowledgedAt', 'is not', null)]),
          eb.and([eb('alerts.silencedBy', 'is not', null), eb('alerts.silencedUntil', 'is', null)]),
        ]),
      ),
    )
    .orderBy('alerts.id')
    .forUpdate('alerts')
    .skipLocked()
    .execute();
  return rows.map(({ tenantChannel, tenantOncall, tenantExpiry, wfTenant, wfMaintenance, wfPaused, ...alert }) => ({
    alert: alert as Alert,
    channel: tenantChannel,
    oncall: tenantOncall ?? {},
    ownershipExpiresAfterSeconds: tenantExpiry,
    workflow: { id: alert.workflowId, tenantId: wfTenant, maintenance: wfMaintenance, paused: wfPaused },
  }));
}

export async function escalateDueWarnings(deps: Pick<Deps, 'db' | 'config'>, now: Date): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const candidates = await lockCandidates(trx, 'due_warning', now);
    const atResume = await failuresAtResume(trx, candidates.map((c) => c.alert.id));
    const decided = candidates.flatMap((c) => {
      const decision = escalationDue({ ...c.alert, failuresAtResume: atResume.get(c.alert.id) ?? null }, now);
      return decision.due ? [{ ...c, reason: decision.reason }] : [];
    });
    if (decided.length === 0) return 0;
    // Nothing pages inside a maintenance window, nor before a window's end has moved the deadline.
    const held = new Set(await workflowsInMaintenance(trx, decided.map((d) => d.workflow), now));
    const awaiting = await alertsAwaitingWindowEnd(trx, decided.map((d) => ({ id: d.alert.id, openedAt: d.alert.openedAt, workflow: d.workflow })), now);
    const due = decided.filter((d) => !held.has(d.workflow.id) && !awaiting.has(d.alert.id));
    if (due.length === 0) return 0;
    const escalated = await trx
      .updateTable('alerts')
      .set({ severity: 'critical', escalatedAt: now, updatedAt: now })
      .where(
        'id',
        'in',
        due.map((d) => d.alert.id),
      )
      .returningAll()
      .execute();
    const byId = new Map(escalated.map((a) => [a.id, a]));
    await recordAlertEvents(
      trx,
      due.map(({ alert, channel, oncall, reason }) => ({
        alert: byId.get(alert.id)!,
        tenant: { channel },
        kind: 'escalated' as const,
        data: {
          from: 'warning',
          to: 'critical',
          reason,
          consecutiveFailures: alert.consecutiveFailures,
          escalateAt: alert.escalateAt?.toISOString() ?? null,
          // Who the escalation pages: Slack posts it as a broadcast reply mentioning them.
          mention: escalationMention(alert.ownerUser, oncall),
        },
        now,
        config: deps.config,
      })),
    );
    return due.length;
  });
}

/** Of `alertIds`, the failures each had counted when its workflow was last resumed (its newest `workflow_resumed` event). */
async function failuresAtResume(trx: Transaction<Database>, alertIds: number[]): Promise<Map<number, number>> {
  if (alertIds.length === 0) return new Map();
  const rows = await trx
    .selectFrom('alertEvents')
    .select(['alertId', 'data'])
    .distinctOn('alertId')
    .where('alertId', 'in', alertIds)
    .where('kind', '=', 'workflow_resumed')
    .orderBy('alertId')
    .orderBy('id', 'desc')
    .execute();
  return new Map(rows.flatMap((r) => {
    const failures = (r.data as { failures?: unknown } | null)?.failures;
    return typeof failures === 'number' ? [[r.alertId, failures] as const] : [];
  }));
}

/** Ownerships older than the tenant's ownershipExpiresAfter lapse: unowned, unacknowledged, so escalation resumes. */
export async function expireOwnerships(deps: Pick<Deps, 'db' | 'config'>, now: Date): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const due = (await lockCandidates(trx, 'owned')).filter((c) => ownershipExpired(c.alert, c.ownershipExpiresAfterSeconds, now));
    const events: EventInput[] = [];
    for (const { alert, channel } of due) {
      const next = await trx
        .updateTable('alerts')
        .set({ ownerUser: null, acknowledgedBy: null, acknowledgedAt: null, updatedAt: now })
        .where('id', '=', alert.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      events.push({ alert: next, tenant: { channel }, kind: 'ownership_expired', data: { previousUser: alert.ownerUser, ownedSince: alert.acknowledgedAt!.toISOString() }, now, config: deps.config });
    }
    await recordAlertEvents(trx, events);
    return due.length;
  });
}

/**
 * Owned alerts still failing remind their owner, less often each time (src/domain/escalation.ts
 * nextReminderAfterMs); after `ownershipLapsesAfterReminders` of them unanswered (default 3) the
 * ownership lapses instead of one more (a critical alert's on-call is told); "until resolved" silences remind once a day; a paused workflow reminds nobody.
 * Nothing pages inside a maintenance window: an owner's reminder (it mentions them) waits for the window's
 * end, and is sent at the first pass after it.
 */
export async function sendReminders(deps: Pick<Deps, 'db' | 'config'>, now: Date): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const events: EventInput[] = [];
    const candidates = await lockCandidates(trx, 'owned_or_silenced_until_resolved');
    const unanswered = await unansweredReminders(trx, candidates.flatMap((c) => (c.alert.ownerUser && c.alert.acknowledgedAt ? [c.alert.id] : [])));
    const due = candidates.flatMap((c) => {
      const decision = reminderDue({ ...c.alert, workflowPaused: c.workflow.paused, unansweredReminders: unanswered.get(c.alert.id) ?? 0 }, now);
      return decision.due ? [{ ...c, decision }] : [];
    });
    const owned = due.filter((d) => d.decision.about !== 'silenced');
    const held = owned.length ? new Set(await workflowsInMaintenance(trx, owned.map((d) => d.workflow), now)) : new Set<number>();
    for (const { alert, channel, oncall, decision, workflow } of due) {
      if (decision.about !== 'silenced' && held.has(workflow.id)) continue;
      if (decision.about === 'lapsed') {
        const next = await trx.updateTable('alerts').set({ ownerUser: null, acknowledgedBy: null, acknowledgedAt: null, updatedAt: now }).where('id', '=', alert.id).returningAll().executeTakeFirstOrThrow();
        // A critical alert pages nobody again on its own: the on-call is told now. A warning's escalation resumes and pages when due.
        const mention = alert.severity === 'critical' ? { mention: escalationMention(null, oncall) } : {};
        const data = { previousUser: decision.ownerUser, ownedSince: decision.since.toISOString(), reason: 'unanswered', reminders: decision.reminders, severity: alert.severity, ...mention };
        events.push({ alert: next, tenant: { channel }, kind: 'ownership_expired', data, now, config: deps.config });
        continue;
      }
      const next = await trx.updateTable('alerts').set({ remindedAt: now }).where('id', '=', alert.id).returningAll().executeTakeFirstOrThrow();
      // lapsesAfter: the reminder tells its owner how many may go unanswered before the ownership lapses.
      const data =
        decision.about === 'owned'
          ? { about: 'owned', ownerUser: decision.ownerUser, since: decision.since.toISOString(), lapsesAfter: lapseAfterReminders(alert.policy) }
          : { about: 'silenced', since: decision.since.toISOString() };
      events.push({ alert: next, tenant: { channel }, kind: 'reminder', data, now, config: deps.config });
    }
    await recordAlertEvents(trx, events);
    return events.length;
  });
}

/**
 * Of `alertIds` (owned), the reminders to the current owner recorded since
 * they took the alert or last acted on it (an event with them as actor):
 * counted from the thread's history, never a stored counter.
 */
async function unansweredReminders(trx: Transaction<Database>, alertIds: number[]): Promise<Map<number, number>> {
  if (alertIds.length === 0) return new Map();
  const { rows } = await sql<{ id: number; n: number }>`
    select a.id, count(e.id)::int as n from alerts a
    join alert_events e on e.alert_id = a.id and e.kind = 'reminder' and e.data->>'about' = 'owned' and e.data->>'ownerUser' = a.owner_user
    where a.id = any(${alertIds}::bigint[])
      and e.at > greatest(a.acknowledged_at, (select max(o.at) from alert_events o where o.alert_id = a.id and o.actor = a.owner_user))
    group by a.id
  `.execute(trx);
  return new Map(rows.map((r) => [Number(r.id), r.n]));
}

export async function endExpiredSilences(deps: Pick<Deps, 'db' | 'config'>, now: Date): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    // skip locked: a replica (or a person unsilencing) already holding one finishes it; the rest are ours.
    const due = await trx
      .selectFrom('alerts')
      .selectAll()
      .where('status', '=', 'open')
      .where('silencedBy', 'is not', null)
      .where('silencedUntil', 'is not', null)
      .where('silencedUntil', '<=', now)
      .forUpdate()
      .skipLocked()
      .execute();
    for (const alert of due) {
      const tenant = await trx
        .selectFrom('workflows')
        .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
        .select(['tenants.channel'])
        .where('workflows.id', '=', alert.workflowId)
        .executeTakeFirstOrThrow();
      await endSilence(trx, alert, tenant, null, 'expired', now, deps.config);
    }
    return due.length;
  });
}
