import { sql, type Transaction } from 'kysely';
import type { Alert, AlertEvent, Database } from '../db/schema.js';
import { prepared } from '../db/prepared.js';

/**
 * An alert that opens in the evaluator's batch. Until it is written it goes
 * by a provisional id, `provisionalAlertId(workflowId)` (negative, so it can
 * never be a real one); its events name it by that id and the statement
 * below swaps in the real one. At most one alert opens per workflow in a
 * batch (the workflow row is locked), which is what makes the id unique.
 */
export interface OpeningAlert {
  workflowId: number;
  /** Every column of the row but id and generation, snake_case, as `alerts` names them. */
  row: Record<string, unknown>;
}

export function provisionalAlertId(workflowId: number): number {
  return -workflowId;
}

export interface EventRow {
  alertId: number;
  at: Date;
  kind: string;
  actor: string | null;
  data: Record<string, unknown>;
  policyVersion: number | null;
}

export interface NotificationRow {
  /** Index of its event in `events`. */
  event: number;
  destination: string;
  status: 'pending' | 'held';
  at: Date;
}

export interface AlertWrites {
  opening: OpeningAlert[];
  /** Open alerts in their new state: the columns the evaluator changes are written. */
  changed: Alert[];
}

export interface EventWrites {
  events: EventRow[];
  notifications: NotificationRow[];
  /** NOTIFY the senders (at commit): some row is due now. */
  wake: boolean;
  channel: string;
}

/**
 * One statement for everything an evaluation (or any use case recording
 * events) writes: the alerts that open, the columns of the alerts that
 * change, the events and their outbox rows, and the NOTIFY that wakes the
 * senders. Data-modifying CTEs, values passed as JSON arrays.
 *
 * Events and outbox rows are inserted in the given order, so their ids (and
 * each thread's delivery order) follow it; an outbox row finds its event by
 * that rank.
 * The idempotency key is `notificationKey` (src/domain/events.ts) spelt in SQL,
 * since an opening alert's id is only known here.
 */
export async function writeAlertsAndEvents(trx: Transaction<Database>, alerts: AlertWrites, writes: EventWrites): Promise<AlertEvent[]> {
  const opening = alerts.opening.map((a) => ({ ...a.row, workflow_id: a.workflowId }));
  const changed = alerts.changed.map(changedColumns);
  const events = writes.events.map((e, i) => ({ ord: i + 1, alert_id: e.alertId, at: e.at, kind: e.kind, actor: e.actor, data: e.data, policy_version: e.policyVersion }));
  const told = writes.notifications.map((n, i) => ({ seq: i, ord: n.event + 1, destination: n.destination, status: n.status, at: n.at }));
  const { rows } = await sql<AlertEvent & { woke: unknown }>`${prepared}
    with opened as (
      insert into alerts (workflow_id, generation, status, severity, opened_at, escalated_at, escalate_at, resolved_at, cadence_seconds, policy,
        policy_version, consecutive_failures, last_error, error_group, error_group_first_at, error_group_last_at, error_group_count, stage,
        first_run_id, last_run_id, owner_user, owner_note, acknowledged_by, acknowledged_at, silenced_until, silenced_by, silence_reason,
        healthy_streak, resolved_by_run_id, updated_at, upstream_alert_id, cause, known_failure_run_id, known_success_run_id, flapping_since, pagers_at_opening)
      -- The workflow row is locked, so no other generation of it can be inserted meanwhile.
      select v.workflow_id, coalesce((select max(g.generation) from alerts g where g.workflow_id = v.workflow_id), 0) + 1, v.status, v.severity,
        v.opened_at, v.escalated_at, v.escalate_at, v.resolved_at, v.cadence_seconds, v.policy, v.policy_version, v.consecutive_failures,
        v.last_error, v.error_group, v.error_group_first_at, v.error_group_last_at, v.error_group_count, v.stage, v.first_run_id, v.last_run_id,
        v.owner_user, v.owner_note, v.acknowledged_by, v.acknowledged_at, v.silenced_until, v.silenced_by, v.silence_reason,
        v.healthy_streak, v.resolved_by_run_id, v.updated_at, v.upstream_alert_id, v.cause, v.known_failure_run_id, v.known_success_run_id,
        v.flapping_since, v.pagers_at_opening
      from jsonb_populate_recordset(null::alerts, ${JSON.stringify(opening)}::jsonb) v
      order by v.workflow_id
      returning id, workflow_id
    ), changed as (
      update alerts a set
        status = v.status, consecutive_failures = v.consecutive_failures, last_error = v.last_error, stage = v.stage,
        last_run_id = v.last_run_id, healthy_streak = v.healthy_streak, error_group = v.error_group,
        error_group_first_at = v.error_group_first_at, error_group_last_at = v.error_group_last_at, error_group_count = v.error_group_count,
        resolved_at = v.resolved_at, resolved_by_run_id = v.resolved_by_run_id, updated_at = v.updated_at, flapping_since = v.flapping_since
      from jsonb_populate_recordset(null::alerts, ${JSON.stringify(changed)}::jsonb) v
      where a.id = v.id
      returning a.id
    ), event_input as (
      select e.ord, coalesce(o.id, e.alert_id) as alert_id, e.at, e.kind, e.actor, e.data, e.policy_version
      from jsonb_to_recordset(${JSON.stringify(events)}::jsonb) as e(ord int, alert_id bigint, at timestamptz, kind text, actor text, data jsonb, policy_version int)
      left join opened o on e.alert_id < 0 and o.workflow_id = -e.alert_id
    ), inserted as (
      insert into alert_events (alert_id, at, kind, actor, data, policy_version)
      select alert_id, at, kind, actor, data, policy_version from event_input order by ord
      returning *
    ), ranked as (
      select id, alert_id, row_number() over (order by id) as ord from inserted
    ), outbox as (
      insert into notifications (alert_id, event_id, destination, idempotency_key, status, next_attempt_at, created_at)
      select r.alert_id, r.id, n.destination, 'alert:' || r.alert_id || ':event:' || r.id || ':' || n.destination, n.status, n.at, n.at
      from jsonb_to_recordset(${JSON.stringify(told)}::jsonb) as n(seq int, ord int, destination text, status text, at timestamptz)
      join ranked r on r.ord = n.ord
      order by n.seq
      returning alert_id
    )
    select inserted.*, (select pg_notify(${writes.channel}, (select min(alert_id)::text from outbox)) where ${writes.wake}) as woke
    from inserted order by inserted.id
  `.execute(trx);
  return rows.map(({ woke: _woke, ...event }) => event);
}

function changedColumns(a: Alert): Record<string, unknown> {
  return {
    id: a.id,
    status: a.status,
    consecutive_failures: a.consecutiveFailures,
    last_error: a.lastError,
    stage: a.stage,
    last_run_id: a.lastRunId,
    healthy_streak: a.healthyStreak,
    error_group: a.errorGroup,
    error_group_first_at: a.errorGroupFirstAt,
    error_group_last_at: a.errorGroupLastAt,
    error_group_count: a.errorGroupCount,
    resolved_at: a.resolvedAt,
    resolved_by_run_id: a.resolvedByRunId,
    updated_at: a.updatedAt,
    flapping_since: a.flappingSince,
  };
}
