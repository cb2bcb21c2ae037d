import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { claimDueWorkflows, dueWindow } from '../../src/engine/tick-claim.js';
import { capturing } from '../helpers/capture-statements.js';
import { fireDueTicks } from '../../src/engine/tick-scheduler.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { recordingReplica } from '../runs/support.js';

/**
 * Tenant "big" has 5,000 managed workflows due a minute before tenant
 * "small"'s one (a daily job at 23:59 each, fired late inside its catch-up
 * window): the scheduler's claim takes the tenants' due ticks in turn, so
 * small's tick is in the first claim and among the first launches, not
 * behind big's whole backlog. And a tenant being disabled while the claim
 * runs does not get a tick fired by it.
 */
const BIG_DUE = at('2026-03-09T23:59:00Z');
const SMALL_DUE = at('2026-03-10T00:00:00Z');
const NOW = at('2026-03-10T00:00:00.200Z');
const LAUNCHER = '{"kind":"command","command":"true"}';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'big', name: 'Big', channel: 'CBIG' });
  await makeTenant(t.db, { id: 'small', name: 'Small', channel: 'CSMALL' });
});
afterAll(() => t?.drop());
beforeEach(async () => {
  await sql`truncate runs cascade`.execute(t.db);
  await t.db.deleteFrom('workflows').execute();
  await t.db.updateTable('tenants').set({ enabled: true }).execute();
});

/** Big's backlog, inserted before small's workflow (lower ids, earlier ticks: first by every older order). */
async function seedBacklog(): Promise<number> {
  await sql`
    insert into workflows (tenant_id, name, cron, mode, launcher, ping_key, next_tick_at)
    select 'big', 'nightly-' || g, '59 23 * * *', 'managed', ${LAUNCHER}::jsonb, 'big-pk-' || g, ${BIG_DUE}
    from generate_series(1, 5000) g
  `.execute(t.db);
  const small = await makeWorkflow(t.db, { tenantId: 'small', name: 'only-job', cron: '* * * * *', mode: 'managed', launcher: LAUNCHER, nextTickAt: SMALL_DUE });
  return small.id;
}

/** What one claim of `limit` would take now (rolled back: only its choice matters). */
async function firstClaim(limit: number): Promise<{ id: number; tenantId: string; nextTickAt: Date | null }[]> {
  let claimed: { id: number; tenantId: string; nextTickAt: Date | null }[] = [];
  await t.db
    .transaction()
    .execute(async (trx) => {
      claimed = await claimDueWorkflows(trx, NOW, limit);
      throw new RolledBack();
    })
    .catch((e: unknown) => {
      if (!(e instanceof RolledBack)) throw e;
    });
  return claimed;
}
class RolledBack extends Error {}

describe("the tick scheduler under one tenant's backlog", () => {
  it("claims the small tenant's tick in the first claim, and each tenant's own ticks oldest first", async () => {
    const smallId = await seedBacklog();
    const claimed = await firstClaim(1_000);
    expect(claimed).toHaveLength(1_000);
    expect(claimed.map((w) => w.id)).toContain(smallId);
    // Big's share of the claim is still its oldest due ticks (all due at once here: its lowest ids).
    const big = claimed.filter((w) => w.tenantId === 'big');
    expect(big).toHaveLength(999);
    expect(big.every((w) => w.nextTickAt!.getTime() === BIG_DUE.getTime())).toBe(true);
    const oldest = await t.db.selectFrom('workflows').select('id').where('tenantId', '=', 'big').orderBy('id').limit(999).execute();
    expect(big.map((w) => w.id)).toEqual(oldest.map((w) => w.id));
  });

  it("fires every due tick once, and the small tenant's among the first claim's launches", async () => {
    const smallId = await seedBacklog();
    const { deps, launched } = recordingReplica(t.db, new ManualClock(NOW));
    expect(await fireDueTicks(deps)).toBe(true);
    expect(launched).toHaveLength(5_001);
    expect(new Set(launched.map((c) => c.workflow.id)).size).toBe(5_001);
    const smallAt = launched.findIndex((c) => c.workflow.id === smallId);
    expect(smallAt).toBeGreaterThanOrEqual(0);
    // Among the first claim's launches (by time alone it was 4,994th of 5,001). Launches of one claim run
    // concurrently, so its exact place among them is not fixed (55th on a loaded machine).
    expect(smallAt).toBeLessThan(1_000);
    expect(launched[smallAt]!.tick!.getTime()).toBe(SMALL_DUE.getTime());
    // Big's ticks fired late, inside a daily job's catch-up window: nothing missed, nothing skipped.
    const { rows } = await sql<{ status: string; n: number }>`select status, count(*)::int as n from runs group by status`.execute(t.db);
    expect(rows).toEqual([{ status: 'running', n: 5_001 }]);
  });
});

describe("the claim's cost", () => {
  it('handles the window of oldest due ticks, not the table times the window, even when the statistics say the table is empty', async () => {
    // Analysed empty, then filled: the planner expects a row or two where there are 20,001.
    await sql`analyze workflows`.execute(t.db);
    await seedBacklog();
    await sql`
      insert into workflows (tenant_id, name, cron, mode, launcher, ping_key, next_tick_at)
      select 'small', 'later-' || g, '* * * * *', 'managed', ${LAUNCHER}::jsonb, 'later-pk-' || g, ${SMALL_DUE}::timestamptz + make_interval(secs => g)
      from generate_series(1, 15000) g
    `.execute(t.db);
    const capture = capturing(t.db);
    const later = new Date(SMALL_DUE.getTime() + 86_400_000);
    await capture.db
      .transaction()
      .execute(async (trx) => {
        expect(await claimDueWorkflows(trx, later, 1_000)).toHaveLength(1_000);
        throw new RolledBack();
      })
      .catch((e: unknown) => {
        if (!(e instanceof RolledBack)) throw e;
      });
    const statements = capture.take();
    expect(statements).toHaveLength(1);
    for (const q of statements) {
      const client = await t.pool.connect();
      try {
        await client.query('begin');
        const { rows } = await client.query<{ 'QUERY PLAN': { Plan: Record<string, unknown> }[] }>(`explain (analyze, format json) ${q.sql}`, q.parameters as unknown[]);
        await client.query('rollback');
        const nodes: Record<string, unknown>[] = [];
        const walk = (node: Record<string, unknown>) => {
          nodes.push(node);
          for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
        };
        walk(rows[0]!['QUERY PLAN'][0]!.Plan);
        // Every row any node handled, counted once per loop: a join of the window against the table (a nested
        // loop over 5,000 × 5,000) would be millions. Whether the due rows are read by the index or by a scan
        // is the planner's choice (PostgreSQL 18 scans the table when all 20,001 are due and its statistics
        // caught up); either stays within the bound.
        const handled = nodes.reduce((sum, n) => sum + Number(n['Actual Rows']) * Number(n['Actual Loops']), 0);
        expect(handled).toBeLessThan(20 * dueWindow(1_000));
      } finally {
        client.release();
      }
    }
  });
});

describe('a tenant disabled while the scheduler claims', () => {
  it('fires none of its ticks: not while the disable is in flight, nor after it commits; a disable rolled back fires them at the next claim', async () => {
    const due = { cron: '* * * * *', mode: 'managed' as const, launcher: LAUNCHER, nextTickAt: SMALL_DUE };
    const small = await makeWorkflow(t.db, { ...due, tenantId: 'small', name: 'only-job' });
    const other = await makeWorkflow(t.db, { ...due, tenantId: 'big', name: 'other-job' });
    const clock = new ManualClock(NOW);

    for (const outcome of ['commit', 'rollback'] as const) {
      // The disable has updated the tenant's row and not yet committed when the claim runs.
      const disabling = await t.pool.connect();
      try {
        await disabling.query('begin');
        await disabling.query(`update tenants set enabled = false, updated_at = now() where id = 'small'`);
        const { deps, launched } = recordingReplica(t.db, clock);
        await fireDueTicks(deps);
        // The other tenant's tick fires as ever.
        expect(launched.map((c) => c.workflow.id)).toEqual([other.id]);
        await disabling.query(outcome);
      } finally {
        disabling.release();
      }
      const { deps, launched } = recordingReplica(t.db, clock);
      await fireDueTicks(deps);
      expect(launched.map((c) => c.workflow.id)).toEqual(outcome === 'commit' ? [] : [small.id]);
      expect(await t.db.selectFrom('runs').select('id').where('workflowId', '=', small.id).execute()).toHaveLength(outcome === 'commit' ? 0 : 1);
      // Back as before for the next round: the tenant enabled, both due.
      await t.db.updateTable('tenants').set({ enabled: true }).execute();
      await t.db.updateTable('workflows').set({ nextTickAt: SMALL_DUE }).execute();
      await sql`truncate runs cascade`.execute(t.db);
    }
  });
});
