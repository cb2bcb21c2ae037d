import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';

/** Bulk seeding in SQL (generate_series): seeding must not dominate a benchmark's wall time. */

export async function seedTenants(db: Db, count: number, channelOf: (i: number) => string | null = (i) => `CBENCH${i}`): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `bench-${i}`);
  await db
    .insertInto('tenants')
    .values(ids.map((id, i) => ({ id, name: `Bench ${i}`, channel: channelOf(i), apiTokenHash: null })))
    .execute();
  return ids;
}

export interface WorkflowSeed {
  count: number;
  tenants: number;
  /** SQL expression over g (1-based series) giving the cron text. */
  cronSql?: ReturnType<typeof sql>;
  mode?: 'observed' | 'managed';
  policy?: Record<string, unknown>;
  launcher?: Record<string, unknown> | null;
  /** SQL expression over g for next_tick_at, or null. */
  nextTickSql?: ReturnType<typeof sql>;
}

export async function seedWorkflows(db: Db, s: WorkflowSeed): Promise<void> {
  await sql`
    insert into workflows (tenant_id, name, cron, mode, launcher, policy, ping_key, next_tick_at)
    select 'bench-' || ((g - 1) % ${s.tenants}), 'wf-' || g, ${s.cronSql ?? sql`'*/5 * * * *'`}, ${s.mode ?? 'observed'},
      ${s.launcher ? JSON.stringify(s.launcher) : null}::jsonb, ${JSON.stringify(s.policy ?? {})}::jsonb, 'pk-' || g || '-' || md5(random()::text),
      ${s.nextTickSql ?? sql`null::timestamptz`}
    from generate_series(1, ${s.count}) g
    order by g
  `.execute(db);
}
