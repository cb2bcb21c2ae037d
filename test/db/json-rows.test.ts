import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { rowFromJson } from '../../src/db/json-rows.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeRun, makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';

let t: TestDatabase;
beforeEach(async () => {
  t = await createTestDatabase();
});
afterEach(async () => t.drop());

// The poller's claim reads workflows and tenants as to_jsonb(row), the outbox's claim alerts and events too: each must come back exactly as kysely reads the table,
// every timestamp column set (a new column that the naming rule misses fails here).
it.each(['workflows', 'tenants', 'runs', 'alerts', 'alertEvents'] as const)('a %s row read from to_jsonb equals the row kysely reads', async (table) => {
  await makeTenant(t.db, { maintenance: JSON.stringify([{ cron: '0 2 * * *', durationMinutes: 30, reason: 'backup' }]) as never, oncall: { users: ['U1'] } });
  const wf = await makeWorkflow(t.db, { policy: { retries: 2, overrides_x: { a_b: 1 } } as never, nextTickAt: T0, pausedAt: T0 });
  const run = await makeRun(t.db, { workflowId: wf.id, tick: T0, deadlineAt: T0, processedAt: T0, leaseExpiresAt: T0 });
  await sql`
    insert into alerts (workflow_id, generation, status, severity, opened_at, escalated_at, escalate_at, resolved_at, cadence_seconds, policy,
      consecutive_failures, error_group_first_at, error_group_last_at, acknowledged_at, silenced_until, updated_at, flapping_since, reminded_at, first_run_id)
    values (${wf.id}, 1, 'open', 'warning', ${T0}, ${T0}, ${T0}, ${T0}, 300, '{"snake_key": 1}', 2, ${T0}, ${T0}, ${T0}, ${T0}, ${T0}, ${T0}, ${T0}, ${run.id})
  `.execute(t.db);
  await sql`insert into alert_events (alert_id, at, kind, actor, data) select id, ${T0}, 'opened', 'U1', '{"snake_key": 1}' from alerts`.execute(t.db);

  const kysely = await t.db.selectFrom(table).selectAll().execute();
  const { rows } = await sql<{ row: Record<string, unknown> }>`select to_jsonb(x) as row from ${sql.table(table)} x`.execute(t.db);
  expect(rows.map((r) => rowFromJson(r.row))).toEqual(kysely);
  const dates = Object.entries(kysely[0]!).filter(([, v]) => v instanceof Date);
  // An event has one timestamp (`at`); every other table several.
  expect(dates.length).toBeGreaterThan(table === 'alertEvents' ? 0 : 1);
});
