import { type Kysely, sql } from 'kysely';

/**
 * Storms (issue 16): many alerts opening at once in one channel are one storm
 * message there. `storms` holds one row per storm per destination (a Slack
 * channel); the partial unique index keeps at most one active storm per
 * destination, whichever replica decides. `storm_alerts` says which alerts the
 * storm took in (their opening went to the storm message, not a root of their
 * own). `shared_causes` is the once-per-window claim of a shared-cause callout
 * on the platform channel (seed 002: group + window start is the key).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table storms (
      id bigserial primary key,
      destination text not null,
      channel text not null,
      started_at timestamptz not null,
      last_joined_at timestamptz not null,
      ended_at timestamptz,
      root_ts text,
      root_claimed_at timestamptz,
      rendered_event_id bigint,
      rendered_at timestamptz
    );
    create unique index storms_one_active_per_destination on storms (destination) where ended_at is null;
    create index storms_active on storms (last_joined_at) where ended_at is null;

    create table storm_alerts (
      storm_id bigint not null references storms (id) on delete cascade,
      alert_id bigint not null references alerts (id) on delete cascade,
      destination text not null,
      joined_at timestamptz not null,
      primary key (alert_id, destination)
    );
    create index storm_alerts_storm on storm_alerts (storm_id);

    create table shared_causes (
      error_group text not null,
      window_start timestamptz not null,
      called_at timestamptz not null,
      alert_id bigint,
      workflows int not null,
      tenants int not null,
      primary key (error_group, window_start)
    );
  `.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
