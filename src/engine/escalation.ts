import { sql, type Transaction } from 'kysely';
import type { Alert, Database } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { escalationMention, lapseAfterReminders, ownershipExpired, reminderDue, type Mention } from '../domain/escalation.js';
import { endSilence } from '../ledger/alert-actions.js';
import { recordAlertEvents, type EventInput } from '../ledger/alert-events.js';
import { unansweredReminders } from '../ledger/reminders.js';
import { escalatingNow, lockCandidates, type Candidate, type EscalationReason } from './escalation-candidates.js';
import { runMaintenanceClock } from './maintenance-clock.js';
import { workflowsInMaintenance } from './maintenance-rules.js';
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

export async function escalateDueWarnings(deps: Pick<Deps, 'db' | 'config'>, now: Date): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const due = await escalatingNow(trx, await lockCandidates(trx, 'due_warning', now), now);
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
      due.map(({ alert, channel, oncall, reason }) => ({ alert: byId.get(alert.id)!, tenant: { channel }, kind: 'escalated' as const, data: escalatedData(alert, reason, escalationMention(alert.ownerUser, oncall)), now, config: deps.config })),
    );
    return due.length;
  });
}

/** An `escalated` event's data; `mention`: who it pages (Slack posts it as a broadcast reply mentioning them). */
function escalatedData(alert: Alert, reason: EscalationReason, mention: Mention, lapsed?: Record<string, unknown>): Record<string, unknown> {
  return { from: 'warning', to: 'critical', reason, consecutiveFailures: alert.consecutiveFailures, escalateAt: alert.escalateAt?.toISOString() ?? null, mention, ...(lapsed ? { lapsed } : {}) };
}

/** An ownership lapsing: the locked alert, and its `ownership_expired` data (previousUser, ownedSince; reason, reminders, severity and a critical's mention when reminders went unanswered). */
type Lapse = Candidate & { data: Record<string, unknown> };

/**
 * Ownerships that lapse (on unanswered reminders, or the tenant's
 * ownershipExpiresAfter): unowned and unacknowledged, in the caller's
 * transaction, on rows it locked. A warning that, unowned, is already due to
 * escalate (its deadline or its kept-failing count passed while it was
 * owned) escalates in the same update and is told once: an `escalated` event
 * whose `lapsed` says whose ownership lapsed and why, one broadcast page of
 * the on-call, not an `ownership_expired` reply followed a pass later by a
 * page. Any other lapse is its own `ownership_expired` event (a critical
 * one's data pages the on-call; a warning escalates later, when it is due).
 */
async function lapseOwnerships(trx: Transaction<Database>, lapses: Lapse[], now: Date, config: Deps['config']): Promise<EventInput[]> {
  const unowned = (a: Alert): Alert => ({ ...a, ownerUser: null, acknowledgedBy: null, acknowledgedAt: null });
  const escalating = new Map((await escalatingNow(trx, lapses, now, (l) => unowned(l.alert))).map((l) => [l.alert.id, l.reason]));
  const events: EventInput[] = [];
  for (const { alert, channel, oncall, data } of lapses) {
    const reason = escalating.get(alert.id);
    const next = await trx
      .updateTable('alerts')
      .set({ ownerUser: null, acknowledgedBy: null, acknowledgedAt: null, remindedAt: now, updatedAt: now, ...(reason ? { severity: 'critical', escalatedAt: now } : {}) })
      .where('id', '=', alert.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (!reason) {
      events.push({ alert: next, tenant: { channel }, kind: 'ownership_expired', data, now, config });
      continue;
    }
    const { previousUser, ownedSince, reason: why, reminders } = data;
    const lapsed = { previousUser, ownedSince, ...(why ? { reason: why, reminders } : {}) };
    events.push({ alert: next, tenant: { channel }, kind: 'escalated', data: escalatedData(alert, reason, escalationMention(null, oncall), lapsed), now, config });
  }
  return events;
}

/**
 * Ownerships older than the tenant's ownershipExpiresAfter lapse: unowned, unacknowledged, so escalation resumes
 * (a warning already due escalates with the lapse, told once: lapseOwnerships).
 */
export async function expireOwnerships(deps: Pick<Deps, 'db' | 'config'>, now: Date): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const due = (await lockCandidates(trx, 'owned')).filter((c) => ownershipExpired(c.alert, c.ownershipExpiresAfterSeconds, now));
    // A paused workflow's alert is unowned too, but escalates only once the workflow is resumed: its reply says so.
    const lapses = due.map((c) => ({ ...c, data: { previousUser: c.alert.ownerUser, ownedSince: c.alert.acknowledgedAt!.toISOString(), ...(c.workflow.paused ? { paused: true } : {}) } }));
    await recordAlertEvents(trx, await lapseOwnerships(trx, lapses, now, deps.config));
    return due.length;
  });
}

/**
 * Owned alerts still failing remind their owner, less often each time (src/domain/escalation.ts
 * nextReminderAfterMs); after `ownershipLapsesAfterReminders` of them unanswered (default 3) the
 * ownership lapses instead of one more (a critical alert's on-call is told; a warning already due escalates
 * with the lapse, one page: lapseOwnerships); a critical alert nobody owns pages its on-call again on the same
 * periods (the lapse sets reminded_at: the next page counts from it); "until resolved" silences remind once a day;
 * a paused workflow reminds nobody.
 * Nothing pages inside a maintenance window: an owner's reminder (it mentions them) waits for the window's
 * end, and is sent at the first pass after it.
 */
export async function sendReminders(deps: Pick<Deps, 'db' | 'config'>, now: Date): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const events: EventInput[] = [];
    const candidates = await lockCandidates(trx, 'owned_or_silenced_until_resolved');
    const unanswered = await unansweredReminders(trx, candidates.flatMap((c) => (c.alert.ownerUser && c.alert.acknowledgedAt ? [c.alert.id] : [])));
    const due = candidates.flatMap((c) => {
      const decision = reminderDue({ ...c.alert, lastFailureAt: c.alert.errorGroupLastAt, workflowPaused: c.workflow.paused, unansweredReminders: unanswered.get(c.alert.id) ?? 0 }, now);
      return decision.due ? [{ ...c, decision }] : [];
    });
    const owned = due.filter((d) => d.decision.about !== 'silenced');
    const held = owned.length ? new Set(await workflowsInMaintenance(trx, owned.map((d) => d.workflow), now)) : new Set<number>();
    const lapses: Lapse[] = [];
    for (const { decision, ...c } of due) {
      const { alert, channel, workflow, oncall } = c;
      if (decision.about !== 'silenced' && held.has(workflow.id)) continue;
      if (decision.about === 'lapsed') {
        // A critical alert pages nobody again on its own: the on-call is told now. A warning escalates with the lapse when it is due, else later.
        const mention = alert.severity === 'critical' ? { mention: escalationMention(null, oncall) } : {};
        lapses.push({ ...c, data: { previousUser: decision.ownerUser, ownedSince: decision.since.toISOString(), reason: 'unanswered', reminders: decision.reminders, severity: alert.severity, ...mention } });
        continue;
      }
      const next = await trx.updateTable('alerts').set({ remindedAt: now }).where('id', '=', alert.id).returningAll().executeTakeFirstOrThrow();
      // lapsesAfter: the reminder tells its owner how many may go unanswered before the ownership lapses.
      const data =
        decision.about === 'owned'
          ? { about: 'owned', ownerUser: decision.ownerUser, since: decision.since.toISOString(), lapsesAfter: lapseAfterReminders(alert.policy) }
          : decision.about === 'unowned'
            ? { about: 'unowned', since: decision.since.toISOString(), mention: escalationMention(null, oncall) }
            : { about: 'silenced', since: decision.since.toISOString() };
      events.push({ alert: next, tenant: { channel }, kind: 'reminder', data, now, config: deps.config });
    }
    events.push(...(await lapseOwnerships(trx, lapses, now, deps.config)));
    await recordAlertEvents(trx, events);
    return events.length;
  });
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
