import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/env.js';
import { parseWorkflowsFile, workflowSchema } from '../../src/config/workflows-file.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import type { Db } from '../../src/db/connect.js';
import { runRetentionPass, DEFAULT_RETENTION } from '../../src/ledger/retention.js';
import { deleteRemovedWorkflows } from '../../src/ledger/workflow-purge.js';
import { deleteWorkflow, putWorkflow } from '../../src/services/workflows-api.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeRun, makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { insertAlert } from '../helpers/slack-outbox.js';
import { eventually } from '../helpers/eventually.js';

/**
 * Workflows removed (from the file, or DELETE over the API) are only disabled;
 * retention removes one once it has been removed longer than
 * ALERT_RETENTION_DAYS and nothing kept points at it (docs/retention.md).
 */
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
});
afterAll(() => t.drop());

const DAY = 86_400_000;
const NOW = new Date(T0.getTime() + 400 * DAY);
const ago = (days: number) => new Date(NOW.getTime() - days * DAY);
const policy = { ...DEFAULT_RETENTION, batch: 100 };

/** A workflow disabled (removed) `days` ago. */
async function removedAgo(name: string, days: number, extra: Record<string, unknown> = {}) {
  return makeWorkflow(t.db, { tenantId: 'acme', name, enabled: false, removedAt: ago(days), updatedAt: ago(days), createdAt: ago(days + 10), ...extra });
}
const stillThere = async (id: number) => (await t.db.selectFrom('workflows').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
const count = async (table: string, id: number) =>
  (await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where workflow_id = ${id}`.execute(t.db)).rows[0]!.n;

describe('retention of removed workflows', () => {
  it('removes one removed longer ago than ALERT_RETENTION_DAYS with nothing left, with its per-workflow rows', async () => {
    const gone = await removedAgo('per-deploy-1', 200);
    const upstream = await removedAgo('per-deploy-upstream', 200);
    await sql`insert into policy_versions (workflow_id, version, policy, changed_by, changed_at) values (${gone.id}, 1, '{}', 'api', ${ago(210)})`.execute(t.db);
    await sql`insert into workflow_dependencies (workflow_id, upstream_id) values (${gone.id}, ${upstream.id})`.execute(t.db);
    await sql`insert into maintenance_windows (tenant_id, workflow_id, starts_at, ends_at, created_by, reason, created_at) values ('acme', ${gone.id}, ${ago(300)}, ${ago(299)}, 'ops', 'x', ${ago(301)})`.execute(t.db);
    const result = await runRetentionPass(t.db, NOW, policy);
    expect(await stillThere(gone.id)).toBe(false);
    expect(await stillThere(upstream.id)).toBe(false);
    expect(result.workflows).toBeGreaterThanOrEqual(2);
    for (const table of ['policy_versions', 'workflow_dependencies', 'maintenance_windows']) expect(await count(table, gone.id)).toBe(0);
  });

  it('keeps one declared with enabled: false however long ago (turned off for the winter, not removed): its id and ping key stay', async () => {
    const declaredOff = await makeWorkflow(t.db, { tenantId: 'acme', name: 'winter-off', enabled: false, updatedAt: ago(400), createdAt: ago(500) });
    await runRetentionPass(t.db, NOW, policy);
    expect(await stillThere(declaredOff.id)).toBe(true);
  });

  it('removal is what the file or a DELETE says, never enabled: false: gone from the file is removed, declared again (even off) is not', async () => {
    const fileOf = (...workflows: { name: string; enabled?: boolean }[]) =>
      parseWorkflowsFile(JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }], workflows: workflows.map((w) => ({ tenant: 'acme', cron: '0 3 * * *', ...w })) }));
    const removedAt = async (name: string) => (await t.db.selectFrom('workflows').select('removedAt').where('tenantId', '=', 'acme').where('name', '=', name).executeTakeFirstOrThrow()).removedAt;
    await syncWorkflowsFile(t.db, fileOf({ name: 'file-a' }, { name: 'file-off', enabled: false }), ago(300));
    expect(await removedAt('file-off')).toBeNull();
    await syncWorkflowsFile(t.db, fileOf({ name: 'file-off', enabled: false }), ago(250));
    expect(await removedAt('file-a')).toEqual(ago(250));
    const [a, off] = [await t.db.selectFrom('workflows').select('id').where('name', '=', 'file-a').executeTakeFirstOrThrow(), await t.db.selectFrom('workflows').select('id').where('name', '=', 'file-off').executeTakeFirstOrThrow()];
    await runRetentionPass(t.db, NOW, policy);
    expect(await stillThere(a.id)).toBe(false);
    expect(await stillThere(off.id)).toBe(true);

    // Removed, then declared again before retention came: no longer removed, even declared off.
    await syncWorkflowsFile(t.db, fileOf(), ago(240));
    expect(await removedAt('file-off')).toEqual(ago(240));
    await syncWorkflowsFile(t.db, fileOf({ name: 'file-off', enabled: false }), ago(230));
    expect(await removedAt('file-off')).toBeNull();
    await runRetentionPass(t.db, NOW, policy);
    expect(await stillThere(off.id)).toBe(true);
  });

  it('keeps one recently removed, one paused, one with runs, one with a kept alert, and an upstream an enabled workflow names', async () => {
    const recent = await removedAgo('recent', 100);
    const paused = await makeWorkflow(t.db, { tenantId: 'acme', name: 'paused', paused: true, pausedAt: ago(300), updatedAt: ago(300) });
    const withRuns = await removedAgo('with-runs', 200);
    // a run retention keeps (still running): the workflow stays with it
    await makeRun(t.db, { workflowId: withRuns.id, tick: ago(210), startedAt: ago(210), status: 'running', finishedAt: null, processedAt: null });
    const alerted = await removedAgo('alerted', 200);
    await insertAlert(t.db, alerted.id, { status: 'resolved', openedAt: ago(201), resolvedAt: ago(100) });
    const named = await removedAgo('named-upstream', 200);
    const downstream = await makeWorkflow(t.db, { tenantId: 'acme', name: 'downstream' });
    await sql`insert into workflow_dependencies (workflow_id, upstream_id) values (${downstream.id}, ${named.id})`.execute(t.db);
    await runRetentionPass(t.db, NOW, policy);
    for (const w of [recent, paused, withRuns, alerted, named, downstream]) expect(await stillThere(w.id), w.name).toBe(true);
    expect(await count('workflow_dependencies', downstream.id)).toBe(1);
  });

  it('a PUT bringing one back as the pass removes it ends consistently: either it was brought back, or it is created anew', async () => {
    const clock = new ManualClock(NOW);
    const deps = { db: t.db, clock, config: loadConfig({}) };
    const spec = workflowSchema.parse({ tenant: 'acme', name: 'nightly-42', cron: '0 3 * * *' });
    expect((await putWorkflow(deps, spec, {})).kind).toBe('created');
    for (let i = 0; i < 6; i++) {
      expect((await deleteWorkflow(deps, 'acme', 'nightly-42', {})).kind).toBe('deleted');
      await sql`update workflows set updated_at = ${ago(200)} where name = 'nightly-42'`.execute(t.db);
      const [put] = await Promise.all([putWorkflow(deps, spec, {}), runRetentionPass(t.db, NOW, policy)]);
      expect(put.kind).toBe('created');
      const rows = await t.db.selectFrom('workflows').selectAll().where('name', '=', 'nightly-42').execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]!.enabled).toBe(true);
      expect(put.kind === 'created' && put.workflow.id).toBe(rows[0]!.id);
      expect(await count('policy_versions', rows[0]!.id)).toBeGreaterThan(0);
    }
  });

  it('a PUT waiting on the purge\'s lock finds the row gone and creates the workflow anew (no foreign key error)', async () => {
    const clock = new ManualClock(NOW);
    const deps = { db: t.db, clock, config: loadConfig({}) };
    const spec = workflowSchema.parse({ tenant: 'acme', name: 'per-customer-7', cron: '0 4 * * *' });
    const first = await putWorkflow(deps, spec, {});
    expect((await deleteWorkflow(deps, 'acme', 'per-customer-7', {})).kind).toBe('deleted');
    await sql`update workflows set updated_at = ${ago(200)}, removed_at = ${ago(200)} where name = 'per-customer-7'`.execute(t.db);
    let put: Promise<Awaited<ReturnType<typeof putWorkflow>>> | undefined;
    await t.db.transaction().execute(async (trx) => {
      expect((await deleteRemovedWorkflows(trx as unknown as Db, ago(180), 100)).n).toBeGreaterThanOrEqual(1);
      put = putWorkflow(deps, spec, {});
      // the PUT is waiting on the deleted row's lock
      await eventually(async () => {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`.execute(t.db);
        expect(rows[0]!.n).toBeGreaterThan(0);
      });
    });
    const result = await put!;
    expect(result.kind).toBe('created');
    expect(first.kind === 'created' && result.kind === 'created' && result.workflow.id !== first.workflow.id).toBe(true);
    expect(await stillThere(result.kind === 'created' ? result.workflow.id : 0)).toBe(true);
  });

  it('skips, without waiting, a removed workflow a PUT holds locked: the PUT wins whole', async () => {
    const w = await removedAgo('held-by-put', 200);
    await t.db.transaction().execute(async (trx) => {
      await trx.selectFrom('workflows').select('id').where('id', '=', w.id).forUpdate().execute();
      expect((await deleteRemovedWorkflows(t.db, ago(180), 100)).n).toBe(0);
      await trx.updateTable('workflows').set({ enabled: true, updatedAt: NOW }).where('id', '=', w.id).execute();
    });
    await runRetentionPass(t.db, NOW, policy);
    expect(await stillThere(w.id)).toBe(true);
  });

  it('removes a removed workflow once its last alert has gone: the pass removes the alert first, then the workflow', async () => {
    const w = await removedAgo('alert-then-gone', 200);
    await insertAlert(t.db, w.id, { status: 'resolved', openedAt: ago(205), resolvedAt: ago(200) });
    await runRetentionPass(t.db, NOW, policy);
    expect(await stillThere(w.id)).toBe(false);
  });

  it('walks forward with a cursor: a batch starts after the last one, so the removed workflows still kept are read once per pass', async () => {
    // kept (a run left), purgeable, kept, purgeable, purgeable: in id order
    const made = [];
    for (const [i, kept] of [true, false, true, false, false].entries()) {
      const w = await removedAgo(`cursor-${i}`, 200);
      if (kept) await makeRun(t.db, { workflowId: w.id, tick: ago(210), startedAt: ago(210), status: 'running', finishedAt: null, processedAt: null });
      made.push(w);
    }
    const [k0, p1, k2, p3, p4] = made as [(typeof made)[0], (typeof made)[0], (typeof made)[0], (typeof made)[0], (typeof made)[0]];
    // Only ids after the cursor are looked at: p1 (before it) stays for this batch.
    const first = await deleteRemovedWorkflows(t.db, ago(180), 1, k2.id);
    expect(first).toEqual({ n: 1, last: p3.id });
    expect(await stillThere(p1.id)).toBe(true);
    const second = await deleteRemovedWorkflows(t.db, ago(180), 1, first.last);
    expect(second).toEqual({ n: 1, last: p4.id });
    // Past the last one: nothing, and the cursor stays where it was.
    expect(await deleteRemovedWorkflows(t.db, ago(180), 1, p4.id)).toEqual({ n: 0, last: p4.id });
    // A whole pass with batches of one walks them all: the kept ones stay, every other goes.
    const batches: number[] = [];
    await runRetentionPass(t.db, NOW, { ...policy, batch: 1 }, (b) => b.table === 'workflows' && batches.push(b.rows));
    expect(await stillThere(p1.id)).toBe(false);
    for (const w of [k0, k2]) expect(await stillThere(w.id), w.name).toBe(true);
    expect(batches.at(-1)).toBe(0);
  });

  it('removes the removed workflows of a disabled tenant by the same rule (a tenant gone from the file: its workflows are removed with it)', async () => {
    const tenant = (id: string) => ({ id, name: id, channel: `C${id.toUpperCase()}` });
    const fileOf = (tenants: string[], workflows: { tenant: string; name: string }[]) =>
      parseWorkflowsFile(JSON.stringify({ tenants: tenants.map(tenant), workflows: workflows.map((w) => ({ cron: '0 3 * * *', ...w })) }));
    await syncWorkflowsFile(t.db, fileOf(['acme', 'initech'], [{ tenant: 'initech', name: 'nightly' }, { tenant: 'initech', name: 'hourly' }]), ago(300));
    // Initech goes from the file: the tenant is disabled, its workflows removed.
    await syncWorkflowsFile(t.db, fileOf(['acme'], []), ago(250));
    const rows = await t.db.selectFrom('workflows').innerJoin('tenants', 'tenants.id', 'workflows.tenantId').select(['workflows.id', 'workflows.removedAt', 'tenants.enabled']).where('tenantId', '=', 'initech').execute();
    expect(rows.map((r) => [r.removedAt, r.enabled])).toEqual([[ago(250), false], [ago(250), false]]);
    // One removed within ALERT_RETENTION_DAYS stays; past it, nothing left, both go.
    await runRetentionPass(t.db, ago(100), policy);
    for (const r of rows) expect(await stillThere(r.id)).toBe(true);
    await runRetentionPass(t.db, NOW, policy);
    for (const r of rows) expect(await stillThere(r.id)).toBe(false);
    expect(await t.db.selectFrom('tenants').select('id').where('id', '=', 'initech').executeTakeFirst()).toBeDefined();

    // A tenant disabled over the API (DELETE /tenants): a workflow removed before goes by the same rule; the ones it
    // still declared are not removed (the tenant may come back with them, docs/api.md) and stay.
    await makeTenant(t.db, { id: 'umbrella', name: 'Umbrella', channel: 'CUMBRELLA', enabled: false });
    const removedBefore = await makeWorkflow(t.db, { tenantId: 'umbrella', name: 'old', enabled: false, removedAt: ago(200), updatedAt: ago(200), createdAt: ago(300) });
    const declared = await makeWorkflow(t.db, { tenantId: 'umbrella', name: 'kept', updatedAt: ago(300), createdAt: ago(300) });
    await runRetentionPass(t.db, NOW, policy);
    expect(await stillThere(removedBefore.id)).toBe(false);
    expect(await stillThere(declared.id)).toBe(true);
  });
});
