import { type Kysely, sql } from 'kysely';

/**
 * The whole first schema. Names are snake_case here and camelCase in code
 * (kysely's CamelCasePlugin).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table tenants (
      id text primary key check (id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
      name text not null,
      channel text,
      api_token_hash text,
      destinations jsonb not null default '[]',
      source text not null default 'file' check (source in ('file', 'api')),
      enabled boolean not null default true,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index tenants_channel on tenants (channel) where channel is not null and enabled;

    create table workflows (
      id serial primary key,
      tenant_id text not null references tenants (id),
      name text not null,
      cron text not null,
      timezone text not null default 'UTC',
      -- false once removed from the config: history is kept, nothing fires or alerts
      enabled boolean not null default true,
      monitoring boolean not null default true,
      paused boolean not null default false,
      -- managed: the bot fires each tick; observed: an outside scheduler does and reports in
      mode text not null check (mode in ('managed', 'observed')),
      launcher jsonb,
      policy jsonb not null default '{}',
      ping_key text not null unique,
      next_tick_at timestamptz,
      source text not null default 'file' check (source in ('file', 'api')),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (tenant_id, name)
    );
    create index workflows_due on workflows (next_tick_at) where enabled and not paused and mode = 'managed';

    create table runs (
      id bigserial primary key,
      workflow_id integer not null references workflows (id),
      -- the scheduled fire time this run belongs to; null for a manual run outside any tick
      tick timestamptz,
      trigger text not null check (trigger in ('schedule', 'manual', 'retry', 'external')),
      attempt integer not null default 1 check (attempt >= 1),
      -- retry attempts point at the tick's original row, which carries the tick's verdict
      original_run_id bigint references runs (id),
      status text not null check (status in ('running', 'pending_retry', 'succeeded', 'failed', 'missed', 'skipped')),
      -- what this row's own attempt did, kept when the verdict is written back over status/error
      attempt_status text check (attempt_status in ('succeeded', 'failed', 'missed')),
      attempt_error text,
      started_at timestamptz,
      finished_at timestamptz,
      deadline_at timestamptz,
      error text,
      error_group text,
      stage text,
      rows bigint,
      exit_code integer,
      log_excerpt text,
      log_url text,
      outcome_note text,
      requested_by text,
      external_id text,
      processed_at timestamptz,
      lease_owner text,
      lease_expires_at timestamptz,
      created_at timestamptz not null default now()
    );
    -- a tick has exactly one original row
    create unique index runs_one_original_per_tick on runs (workflow_id, tick) where original_run_id is null and tick is not null;
    create unique index runs_external_id on runs (workflow_id, external_id) where external_id is not null;
    -- the poller's queue: finished and not yet processed
    create index runs_unprocessed on runs (id) where processed_at is null and status in ('succeeded', 'failed', 'missed');
    create index runs_running on runs (deadline_at) where status = 'running';
    create index runs_history on runs (workflow_id, tick desc) where original_run_id is null;
    create index runs_attempts on runs (original_run_id) where original_run_id is not null;

    create table alerts (
      id bigserial primary key,
      workflow_id integer not null references workflows (id),
      -- 1 for the workflow's first alert, 2 for the next…: a recurrence after resolution is a new generation
      generation integer not null,
      status text not null check (status in ('open', 'resolved')),
      severity text not null check (severity in ('warning', 'critical')),
      opened_at timestamptz not null,
      escalated_at timestamptz,
      escalate_at timestamptz,
      resolved_at timestamptz,
      -- captured when the alert opened, so editing the cron mid-incident does not move the deadline
      cadence_seconds integer not null,
      policy jsonb not null,
      consecutive_failures integer not null,
      last_error text,
      error_group text,
      error_group_first_at timestamptz,
      error_group_last_at timestamptz,
      error_group_count integer not null default 0,
      stage text,
      first_run_id bigint references runs (id),
      last_run_id bigint references runs (id),
      owner_team text not null default 'engineering' check (owner_team in ('engineering', 'customer')),
      owner_user text,
      owner_note text,
      acknowledged_by text,
      acknowledged_at timestamptz,
      silenced_until timestamptz,
      silenced_by text,
      silence_reason text,
      healthy_streak integer not null default 0,
      resolved_by_run_id bigint references runs (id),
      updated_at timestamptz not null,
      unique (workflow_id, generation)
    );
    -- at most one open alert per workflow: the last line of defence, not the mechanism
    create unique index alerts_one_open_per_workflow on alerts (workflow_id) where status = 'open';
    create index alerts_open_escalation on alerts (escalate_at) where status = 'open' and severity = 'warning';

    create table alert_events (
      id bigserial primary key,
      alert_id bigint not null references alerts (id),
      at timestamptz not null,
      kind text not null,
      actor text,
      data jsonb not null default '{}'
    );
    create index alert_events_by_alert on alert_events (alert_id, id);

    create table notifications (
      id bigserial primary key,
      alert_id bigint not null references alerts (id),
      event_id bigint not null references alert_events (id),
      -- 'slack:C0123', 'email:ops@example.com', 'webhook:<name>', 'pagerduty:<name>'
      destination text not null,
      idempotency_key text not null unique,
      -- held: recorded while the alert is silenced, summarised when the silence ends
      status text not null default 'pending' check (status in ('pending', 'held', 'sending', 'sent', 'dead', 'skipped')),
      attempts integer not null default 0,
      next_attempt_at timestamptz not null,
      lease_owner text,
      lease_expires_at timestamptz,
      result jsonb,
      last_error text,
      created_at timestamptz not null,
      sent_at timestamptz
    );
    create index notifications_due on notifications (next_attempt_at, id) where status in ('pending', 'sending');
    create index notifications_by_alert on notifications (alert_id, destination, id);

    create table alert_threads (
      alert_id bigint not null references alerts (id),
      destination text not null,
      channel text not null,
      root_ts text not null,
      -- the newest state the root was rendered from, to coalesce chat.update
      rendered_event_id bigint,
      created_at timestamptz not null default now(),
      primary key (alert_id, destination)
    );

    -- each replica says it is alive; a tick that fell where no replica was alive is skipped, not missed
    create table monitor_uptime (
      id bigserial primary key,
      replica_id text not null,
      started_at timestamptz not null,
      last_seen_at timestamptz not null
    );
    create index monitor_uptime_span on monitor_uptime (last_seen_at, started_at);

    create table slack_home_views (
      user_id text primary key,
      opened_at timestamptz not null
    );
  `.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
