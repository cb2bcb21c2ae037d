import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { loadDigestFacts } from '../../src/services/digest-queries.js';
import { buildDigest } from '../../src/slack/blocks/digest.js';
import { renderHome } from '../../src/slack/blocks/home.js';
import { renderStatusList, renderWorkflowStatus } from '../../src/slack/blocks/status.js';
import { homeModel, statusRows, workflowDetail, workflowsInScope } from '../../src/slack/views/queries.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';

/**
 * An upstream-blocked workflow where people look: /scheduler status, App
 * Home, the digest and the read API; and an operator-made link across
 * tenants that never names one tenant's workflow to the other.
 */
const NOW = new Date('2026-03-10T03:00:00Z');
const ADMIN = 'admin-token-0123456789abcdef';

let t: TestDatabase;
let engine: Engine;
let load: Workflow;
let mart: Workflow;
let fx: Workflow;

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
  load = await makeWorkflow(t.db, { name: 'warehouse-load', cron: '0 2 * * *' });
  mart = await makeWorkflow(t.db, { name: 'orders-mart', cron: '30 * * * *' });
  fx = await makeWorkflow(t.db, { tenantId: 'globex', name: 'fx-report', cron: '40 * * * *' });
  // The operator linked globex's report to acme's load (the file or the admin token may).
  await t.db.insertInto('workflowDependencies').values([{ workflowId: mart.id, upstreamId: load.id }, { workflowId: fx.id, upstreamId: load.id }]).execute();
  engine = createEngine(t.db, NOW);
  for (const [w, tick] of [[load, '2026-03-10T02:00:00Z'], [mart, '2026-03-10T02:30:00Z'], [fx, '2026-03-10T02:40:00Z'], [mart, '2026-03-10T03:30:00Z']] as const) {
    await reportRun(t.db, w, new Date(tick), { status: 'failed', error: `${w.name} failed` }, NOW);
    await engine.drain();
  }
});
afterAll(async () => {
  await t.drop();
});

describe('an upstream-blocked workflow', () => {
  it('opens nothing; the upstream alert names its own tenant and only counts the other', async () => {
    const alerts = await t.db.selectFrom('alerts').select(['id', 'workflowId']).execute();
    expect(alerts.map((a) => a.workflowId)).toEqual([load.id]);
    const told = await t.db.selectFrom('alertEvents').select('data').where('kind', '=', 'upstream_affected').orderBy('id').execute();
    // Told when a workflow joins the list (fx-report's failure), not on every later failure: the running count is in the ledger.
    expect(told).toHaveLength(2);
    expect(told.at(-1)!.data).toMatchObject({ affected: [{ tenant: 'acme', workflow: 'orders-mart', failures: 1, missed: 0 }], otherTenants: 1 });
    const blocks = await t.db.selectFrom('upstreamBlocks').select(['workflowId', 'failures']).orderBy('workflowId').execute();
    expect(blocks).toEqual([{ workflowId: mart.id, failures: 2 }, { workflowId: fx.id, failures: 1 }]);
    expect(JSON.stringify(told)).not.toContain('fx-report');
  });

  it('/scheduler status says upstream-blocked, naming the upstream within its tenant only', async () => {
    const acme = renderStatusList(await statusRows(t.db, await workflowsInScope(t.db, { tenantId: 'acme' }), NOW, 'acme'), 'Acme');
    const martLine = JSON.stringify(acme.blocks).split('\\n').find((l) => l.includes('orders-mart'))!;
    expect(martLine).toContain(':link: upstream-blocked');
    expect(martLine).toContain('*warehouse-load* (alert #');
    expect(martLine).toContain('2 failures since');
    expect(acme.text).toContain('orders-mart (upstream-blocked)');

    const globex = renderStatusList(await statusRows(t.db, await workflowsInScope(t.db, { tenantId: 'globex' }), NOW, 'globex'), 'Globex');
    expect(JSON.stringify(globex.blocks)).toContain("upstream-blocked by *another tenant's workflow*");
    expect(JSON.stringify(globex)).not.toContain('warehouse-load');

    const detail = renderWorkflowStatus(await workflowDetail(t.db, engine.deps.launchers, fx, NOW));
    expect(JSON.stringify(detail.blocks)).toContain('*Upstream-blocked*');
    expect(JSON.stringify(detail)).not.toContain('warehouse-load');
  });

  it('App Home lists it under its tenant; a viewer of globex alone is not told the upstream', async () => {
    const both = JSON.stringify(renderHome(await homeModel(t.db, NOW, ['acme', 'globex']), NOW));
    expect(both).toContain('orders-mart* · upstream-blocked by *warehouse-load*');
    expect(both).toContain('fx-report* · upstream-blocked by *acme/warehouse-load*');
    const globexOnly = JSON.stringify(renderHome(await homeModel(t.db, NOW, ['globex']), NOW));
    expect(globexOnly).toContain("fx-report* · upstream-blocked by *another tenant's workflow*");
    expect(globexOnly).not.toContain('warehouse-load');
  });

  it('the digest has a section for it', async () => {
    const facts = await loadDigestFacts(t.db, 'globex', new Date('2026-03-09T03:00:00Z'), NOW);
    expect(facts!.heldBack).toEqual([{ workflow: 'fx-report', upstream: "another tenant's workflow", failures: 1, missed: 0, stillBlocked: true }]);
    const digest = buildDigest(facts!)!;
    expect(digest.plainText).toContain("Held back by an upstream incident\n- fx-report: upstream-blocked by another tenant's workflow (1 failure), still blocked");
  });

  it('the read API shows it, and withholds the other tenant from a tenant token', async () => {
    const app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock: engine.clock });
    try {
      const admin = apiClient(app.url, ADMIN);
      const globex = apiClient(app.url, (await admin('POST', '/api/v1/tenants/globex/token')).body.token);
      const martView = await admin('GET', '/api/v1/workflows/acme/orders-mart');
      expect(martView.body).toMatchObject({ dependsOn: ['warehouse-load'], upstreamBlocked: { upstream: { tenant: 'acme', workflow: 'warehouse-load' }, failures: 2, missed: 0 } });
      const fxView = await globex('GET', '/api/v1/workflows/globex/fx-report');
      expect(fxView.body).toMatchObject({ dependsOn: [], dependsOnOtherTenants: 1, upstreamBlocked: { upstream: { otherTenant: true }, failures: 1 } });
      expect(JSON.stringify(fxView.body)).not.toContain('warehouse-load');
      const list = await globex('GET', '/api/v1/workflows');
      expect(list.body.workflows[0].upstreamBlocked).toMatchObject({ upstream: { otherTenant: true } });

      const alertId = martView.body.upstreamBlocked.upstream.alertId;
      const detail = await admin('GET', `/api/v1/alerts/${alertId}`);
      expect(detail.body.dependency.affected.map((a: { tenant: string; workflow: string }) => `${a.tenant}/${a.workflow}`)).toEqual(['acme/orders-mart', 'globex/fx-report']);
      expect(detail.body.dependency.upstream).toBeNull();
    } finally {
      await app.stop();
    }
  });
});
