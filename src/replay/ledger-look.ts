import { sql } from 'kysely';
import type { Deps } from '../deps.js';
import { escalationDueAt } from '../domain/escalation.js';
import { HELD_BACK_NOTES_DUE } from '../ledger/held-back-notes.js';

/** The root refresher's own window for re-rendering resolved alerts. */
export const RECENTLY_RESOLVED_MS = 24 * 3_600_000;

/**
 * What the replay's driver reads of the ledger after each instant to find the
 * next one (src/replay/virtual-driver.ts): when ticks, deadlines, leases and
 * outbox rows come due, what the escalation clock may have to do, and whether
 * the outbox was left idle. One statement, so a replay's look is one round trip.
 */
export async function lookAtLedger(deps: Pick<Deps, 'db'>, now: Date, heldRunIds: number[]) {
  const { rows } = await sql<{
    nextTick: Date | null;
    nextDeadline: Date | null;
    nextRunLease: Date | null;
    anyOpen: boolean;
    clockWork: boolean;
    silenceEnd: Date | null;
    nextSend: Date | null;
    nextLease: Date | null;
    waiting: string[] | null;
    staleRoots: boolean;
    held: boolean;
  }>`
    select
      (select min(w.next_tick_at) from workflows w join tenants tn on tn.id = w.tenant_id
        where w.mode = 'managed' and w.enabled and not w.paused and tn.enabled) as next_tick,
      (select min(deadline_at) from runs where status = 'running') as next_deadline,
      (select min(lease_expires_at) from runs where status = 'running' and id <> all(${heldRunIds}::int8[])) as next_run_lease,
      exists (select 1 from alerts where status = 'open') as any_open,
      -- Reminders, ownership expiry and maintenance windows are decided in TypeScript each minute: while any can be due, stop on every grid instant.
      (exists (select 1 from alerts where status = 'open' and (acknowledged_at is not null or (silenced_by is not null and silenced_until is null) or (severity = 'critical' and owner_user is null and silenced_by is null
          and error_group_last_at > greatest(reminded_at, coalesce(escalated_at, opened_at)))))
        or exists (select 1 from maintenance_windows where told_at is null)
        or exists (select 1 from workflows where maintenance <> '[]'::jsonb)
        or exists (select 1 from tenants where maintenance <> '[]'::jsonb)) as clock_work,
      (select min(silenced_until) from alerts where status = 'open' and silenced_by is not null and silenced_until > ${now}) as silence_end,
      (select min(next_attempt_at) from notifications where status in ('pending', 'sending') and next_attempt_at > ${now}) as next_send,
      (select min(lease_expires_at) from notifications where status = 'sending' and lease_expires_at > ${now}) as next_lease,
      (select array_agg(distinct destination) from notifications where status in ('pending', 'sending') and next_attempt_at <= ${now}) as waiting,
      exists (
        select 1 from alert_threads th join alerts a on a.id = th.alert_id
        where (a.status = 'open' or a.resolved_at > ${new Date(now.getTime() - RECENTLY_RESOLVED_MS)})
          and (select max(n.event_id) from notifications n where n.alert_id = th.alert_id and n.destination = th.destination and n.status = 'sent')
          > coalesce(th.rendered_event_id, 0)
      ) as stale_roots,
      exists (select 1 from destination_outages) as held
  `.execute(deps.db);
  return rows[0]!;
}

/** When the earliest warning escalates: SQL narrows to those that can, the domain's rule says when. */
export async function nextEscalation(deps: Pick<Deps, 'db'>, now: Date): Promise<number | undefined> {
  const warnings = await deps.db
    .selectFrom('alerts')
    .select(['status', 'severity', 'acknowledgedAt', 'escalateAt', 'consecutiveFailures', 'policy'])
    .where('status', '=', 'open')
    .where('severity', '=', 'warning')
    .where('acknowledgedAt', 'is', null)
    .execute();
  const at = Math.min(...warnings.map((a) => escalationDueAt(a, now)?.getTime() ?? Infinity));
  return Number.isFinite(at) ? at : undefined;
}

/**
 * Whether an outbox row is due now (an event's new rows, a silence's held rows
 * let go), a storm ended without its message re-rendered, or a held-back note
 * is due: the writes of an instant that give an idle outbox work.
 */
export async function outboxStirred(deps: Pick<Deps, 'db'>, now: Date): Promise<boolean> {
  const { rows } = await sql<{ stirred: boolean }>`
    select exists (select 1 from notifications where status in ('pending', 'sending') and next_attempt_at <= ${now})
      or exists (select 1 from storms where root_ts is not null and ended_at is not null and (rendered_at is null or rendered_at < ended_at))
      or exists (${HELD_BACK_NOTES_DUE}) as stirred
  `.execute(deps.db);
  return rows[0]!.stirred;
}
