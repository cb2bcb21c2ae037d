import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/connect.js';
import { parseWorkflowsFile, WorkflowsFileError } from '../../src/config/workflows-file.js';
import type { Workflow } from '../../src/db/schema.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import { finishReportedRun, reportRun as ingestRun } from '../../src/services/ingest.js';
import { pauseWorkflow, resumeWorkflow } from '../../src/services/workflow-state.js';
import { deleteWorkflow } from '../../src/services/workflows-api.js';
import { requestRunNow } from '../../src/services/run-now.js';
import { putTenant } from '../../src/services/tenants-api.js';
import { finishRun } from '../../src/ledger/runs.js';
import { takeOwnership } from '../../src/ledger/alert-actions.js';
import { runEscalationClock } from '../../src/engine/escalation.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { eventually } from '../helpers/eventually.js';
import { createEngine, fireTick, notificationStory, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';

const START = new Date('2026-03-10T02:00:00Z');
const acme = { tenantId: 'acme' };
const ADMIN = 'admin-token-0123456789abcdef';

let t: TestDatabase;
let engine: Engine;
let wf: Workflow;
let tickAt: Date;

beforeEach(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, START);
  await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
  wf = await makeWorkflow(t.db, { name: 'check', cron: '*/5 * * * *', source: 'api' });
  tickAt = START;
});
afterEach(async () => t.drop());

async function failNext(count = 1) {
  for (let i = 0; i < count; i++) {
    tickAt = new Date(tickAt.getTime() + minutes(5));
    engine.clock.set(new Date(tickAt.getTime() + minutes(1)));
    await reportRun(t.db, wf, tickAt, { status: 'failed', error: 'check failed: 17 rows missing' }, engine.clock.now());
    await engine.step();
  }
}

const alertOf = async () => (await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).orderBy('id', 'desc').executeTakeFirst())!;
const events = async (alertId: number) => t.db.selectFrom('alertEvents').select(['kind', 'actor', 'data']).where('alertId', '=', alertId).orderBy('id').execute();

describe('pause and resume', () => {
  it('pausing stops escalation at once (failures past every threshold), resuming resumes the clock where it stopped', async () => {
    await failNext(3);
    const opened = await alertOf();
    expect(opened).toMatchObject({ severity: 'warning' });
    const pausedAt = engine.clock.now();
    const paused = await pauseWorkflow(engine.deps, { workflowId: wf.id, actor: 'U0OPS', scope: acme, reason: 'vendor outage' });
    expect(paused).toMatchObject({ kind: 'ok', workflow: { paused: true, pausedBy: 'U0OPS', pauseReason: 'vendor outage' }, alert: { id: opened.id } });
    expect(await pauseWorkflow(engine.deps, { workflowId: wf.id, actor: 'U0OPS', scope: acme })).toMatchObject({ kind: 'already_paused' });
    expect(await pauseWorkflow(engine.deps, { workflowId: wf.id, actor: 'U0OPS', scope: { tenantId: 'globex' } })).toEqual({ kind: 'not_found' });

    await failNext(8); // an outside scheduler still reports: past 2 × alertAfter and past the 30-minute deadline
    const during = await alertOf();
    expect(during).toMatchObject({ status: 'open', severity: 'warning', escalatedAt: null });
    expect(during.consecutiveFailures).toBeGreaterThanOrEqual(6);

    const resumed = await resumeWorkflow(engine.deps, { workflowId: wf.id, actor: 'U0OPS', scope: acme });
    expect(resumed).toMatchObject({ kind: 'ok', workflow: { paused: false, pausedBy: null } });
    const stood = engine.clock.now().getTime() - pausedAt.getTime();
    expect((await alertOf()).escalateAt!.getTime()).toBe(opened.escalateAt!.getTime() + stood);
    expect((await events(opened.id)).filter((e) => e.kind.startsWith('workflow_'))).toEqual([
      { kind: 'workflow_paused', actor: 'U0OPS', data: { reason: 'vendor outage' } },
      { kind: 'workflow_resumed', actor: 'U0OPS', data: { failures: during.consecutiveFailures } },
    ]);
    // The thread hears both.
    expect((await notificationStory(t.db, opened.id)).filter((n) => n.kind.startsWith('workflow_')).map((n) => `${n.kind} ${n.destination}`)).toEqual([
      'workflow_paused slack:CACME',
      'workflow_paused slack:CPLATFORM',
      'workflow_resumed slack:CACME',
      'workflow_resumed slack:CPLATFORM',
    ]);
    // Resuming alone pages nobody: the failures counted while paused were known when it was paused.
    await runEscalationClock(engine.deps);
    expect(await alertOf()).toMatchObject({ severity: 'warning', escalatedAt: null });
    // Resumed, it escalates on its next failure, on the failures it kept counting.
    await failNext(1);
    expect((await alertOf()).severity).toBe('critical');
  });

  it("an owned alert's reminders stand still while paused and count again from the resume", async () => {
    await failNext(3);
    const opened = await alertOf();
    await takeOwnership(engine.deps, { alertId: opened.id, actor: { user: 'U0ALICE' }, scope: acme });
    const reminders = async () => (await events(opened.id)).filter((e) => e.kind === 'reminder').length;
    await pauseWorkflow(engine.deps, { workflowId: wf.id, actor: 'U0OPS', scope: acme, reason: 'vendor outage' });
    // Two hours paused: a 5-minute job would have reminded its owner at 30 minutes.
    await failNext(1);
    engine.clock.advance(minutes(120));
    await runEscalationClock(engine.deps);
    expect(await reminders()).toBe(0);
    await resumeWorkflow(engine.deps, { workflowId: wf.id, actor: 'U0OPS', scope: acme });
    await runEscalationClock(engine.deps);
    expect(await reminders()).toBe(0);
    // Still open after the resume: the owner hears of it once the gap has passed since (as long as it had been owned: 2 hours).
    engine.clock.advance(minutes(120));
    await runEscalationClock(engine.deps);
    expect(await reminders()).toBe(0);
    engine.clock.advance(minutes(10));
    await runEscalationClock(engine.deps);
    expect(await reminders()).toBe(1);
  });

  it('paused, an outside scheduler keeps reporting failures: recorded, no alert opens; resumed, the next failure opens one on the whole streak', async () => {
    await pauseWorkflow(engine.deps, { workflowId: wf.id, actor: 'U0OPS', scope: acme });
    await failNext(5);
    expect(await t.db.selectFrom('runs').select('status').where('workflowId', '=', wf.id).execute()).toHaveLength(5);
    expect(await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).execute()).toEqual([]);
    expect(await t.db.selectFrom('notifications').selectAll().execute()).toEqual([]);
    engine.clock.advance(minutes(3));
    await resumeWorkflow(engine.deps, { workflowId: wf.id, actor: 'U0OPS', scope: acme });
    // Resuming alone opens nothing: the history is evaluated again on the next run.
    expect(await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).execute()).toEqual([]);
    await failNext(1);
    const opened = await alertOf();
    // The failures reported while paused are history like any other: six in a row is past escalateAfterFailures (2 × 3).
    expect(opened).toMatchObject({ status: 'open', severity: 'critical', consecutiveFailures: 6 });
    expect((await events(opened.id)).map((e) => e.kind)).toEqual(['opened', 'escalated']);
  });

  it('paused with an alert open: a success still resolves it; a failure reported with retry budget is not retried (a paused workflow fires nothing)', async () => {
    await t.db.updateTable('workflows').set({ launcher: { type: 'http', url: 'https://jobs.example/run' } as never, policy: { retries: 2 } as never }).where('id', '=', wf.id).execute();
    wf = await t.db.selectFrom('workflows').selectAll().where('id', '=', wf.id).executeTakeFirstOrThrow();
    engine.launcher.otherwise({ status: 'failed', error: 'check failed: 17 rows missing' });
    await failNext(3);
    const opened = await alertOf();
    expect(opened.status).toBe('open');
    const launchedBefore = engine.launcher.launched.length;
    expect(launchedBefore).toBeGreaterThan(0);
    await pauseWorkflow(engine.deps, { workflowId: wf.id, actor: 'U0OPS', scope: acme });
    await failNext(1);
    expect(engine.launcher.launched.length).toBe(launchedBefore);
    expect((await alertOf()).consecutiveFailures).toBe(4);
    tickAt = new Date(tickAt.getTime() + minutes(5));
    engine.clock.set(new Date(tickAt.getTime() + minutes(1)));
    await reportRun(t.db, wf, tickAt, { status: 'succeeded' }, engine.clock.now());
    await engine.step();
    expect(await alertOf()).toMatchObject({ id: opened.id, status: 'resolved' });
  });

  it('paused and unpaused in the file: the thread hears both and the clock carries on where it stopped, as by hand', async () => {
    const file = (paused: boolean) =>
      parseWorkflowsFile(JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }], workflows: [{ tenant: 'acme', name: 'filed', cron: '*/5 * * * *', paused }] }));
    await syncWorkflowsFile(t.db, file(false), START, {}, engine.deps.config);
    wf = await t.db.selectFrom('workflows').selectAll().where('name', '=', 'filed').executeTakeFirstOrThrow();
    await failNext(3);
    const opened = await alertOf();
    const pausedAt = engine.clock.now();
    await syncWorkflowsFile(t.db, file(true), pausedAt, {}, engine.deps.config);
    // Two hours paused, far past the 30-minute deadline.
    engine.clock.advance(minutes(120));
    await engine.step();
    expect((await alertOf()).severity).toBe('warning');
    await syncWorkflowsFile(t.db, file(false), engine.clock.now(), {}, engine.deps.config);
    expect((await alertOf()).escalateAt!.getTime()).toBe(opened.escalateAt!.getTime() + (engine.clock.now().getTime() - pausedAt.getTime()));
    await engine.step();
    expect((await alertOf()).severity).toBe('warning');
    expect((await events(opened.id)).filter((e) => e.kind.startsWith('workflow_'))).toEqual([
      { kind: 'workflow_paused', actor: 'workflows file', data: {} },
      { kind: 'workflow_resumed', actor: 'workflows file', data: { failures: 3 } },
    ]);
    expect(await t.db.selectFrom('workflows').select(['paused', 'pausedAt']).where('id', '=', wf.id).executeTakeFirstOrThrow()).toEqual({ paused: false, pausedAt: null });
  });

  it('paused over the API (PUT with paused: true), then unpaused: the same', async () => {
    const app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock: engine.clock });
    try {
      const admin = apiClient(app.url, ADMIN);
      const spec = (paused: boolean) => ({ cron: '*/5 * * * *', paused });
      expect((await admin('PUT', '/api/v1/workflows/acme/check', spec(false))).status).toBe(200);
      await failNext(3);
      const opened = await alertOf();
      expect((await admin('PUT', '/api/v1/workflows/acme/check', spec(true))).status).toBe(200);
      engine.clock.advance(minutes(90));
      expect((await admin('PUT', '/api/v1/workflows/acme/check', spec(false))).status).toBe(200);
      expect((await alertOf()).escalateAt!.getTime()).toBe(opened.escalateAt!.getTime() + minutes(90));
      expect((await events(opened.id)).filter((e) => e.kind.startsWith('workflow_')).map((e) => `${e.kind} ${e.actor}`)).toEqual(['workflow_paused api:admin', 'workflow_resumed api:admin']);
    } finally {
      await app.stop();
    }
  });

  it('a workflow paused by its definition is not resumed by hand', async () => {
    await t.db.updateTable('workflows').set({ paused: true }).where('id', '=', wf.id).execute();
    expect(await resumeWorkflow(engine.deps, { workflowId: wf.id, actor: 'U0OPS', scope: acme })).toMatchObject({ kind: 'paused_by_config' });
  });
});

describe('disabling or deleting resolves the open alert', () => {
  const file = (enabled: boolean | undefined, listed = true) =>
    parseWorkflowsFile(
      JSON.stringify({
        tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }],
        workflows: listed ? [{ tenant: 'acme', name: 'filed', cron: '*/5 * * * *', ...(enabled === undefined ? {} : { enabled }) }] : [],
      }),
    );

  for (const how of ['enabled: false', 'removed from the file'] as const) {
    it(`in the file (${how}): resolved with by: workflow_disabled, and nothing escalates`, async () => {
      await syncWorkflowsFile(t.db, file(undefined), START, {}, engine.deps.config);
      wf = await t.db.selectFrom('workflows').selectAll().where('name', '=', 'filed').executeTakeFirstOrThrow();
      await failNext(3);
      const opened = await alertOf();
      const result = await syncWorkflowsFile(t.db, how === 'enabled: false' ? file(false) : file(undefined, false), engine.clock.now(), {}, engine.deps.config);
      expect(result.workflows.changed).toEqual([how === 'enabled: false' ? 'acme/filed: enabled' : 'acme/filed: removed']);
      const closed = await alertOf();
      expect(closed).toMatchObject({ id: opened.id, status: 'resolved', resolvedAt: engine.clock.now(), severity: 'warning' });
      const { data } = (await events(opened.id)).at(-1)!;
      expect((await events(opened.id)).at(-1)).toMatchObject({ kind: 'resolved', actor: null, data: { by: 'workflow_disabled' } });
      // Removed: the thread is told so; `enabled: false` is a disabling.
      expect((data as { how?: string }).how).toBe(how === 'enabled: false' ? undefined : 'removed_from_file');
      expect((await notificationStory(t.db, opened.id)).filter((n) => n.kind === 'resolved').map((n) => n.destination)).toEqual(['slack:CACME', 'slack:CPLATFORM']);
      engine.clock.advance(minutes(120));
      await engine.step();
      expect((await alertOf()).severity).toBe('warning');
    });
  }

  it('enabled again: judged on its ticks from the resolution on, not on the streak before it (as after a hand resolve)', async () => {
    await syncWorkflowsFile(t.db, file(undefined), START, {}, engine.deps.config);
    wf = await t.db.selectFrom('workflows').selectAll().where('name', '=', 'filed').executeTakeFirstOrThrow();
    await failNext(5);
    const opened = await alertOf();
    await syncWorkflowsFile(t.db, file(false), engine.clock.now(), {}, engine.deps.config);
    await syncWorkflowsFile(t.db, file(true), engine.clock.now(), {}, engine.deps.config);
    await failNext(2);
    expect(await alertOf()).toMatchObject({ id: opened.id, status: 'resolved' });
    await failNext(1);
    expect(await alertOf()).toMatchObject({ status: 'open', consecutiveFailures: 3, severity: 'warning' });
  });

  it('a tenant removed from the file: its API workflow\'s alert is resolved (by: tenant_disabled), nothing is missed while it is gone, and its return starts from the next tick', async () => {
    const tenants = (withAcme: boolean) =>
      parseWorkflowsFile(JSON.stringify({ tenants: [...(withAcme ? [{ id: 'acme', name: 'Acme', channel: 'CACME' }] : []), { id: 'globex', name: 'Globex', channel: 'CGLOBEX' }], workflows: [] }));
    await syncWorkflowsFile(t.db, tenants(true), START, {}, engine.deps.config);
    await t.db.updateTable('workflows').set({ nextTickAt: new Date(START.getTime() + minutes(5)) }).where('id', '=', wf.id).execute();
    await engine.step(); // the monitor is up
    await failNext(3);
    const opened = await alertOf();
    expect(opened).toMatchObject({ status: 'open', severity: 'warning' });

    const result = await syncWorkflowsFile(t.db, tenants(false), engine.clock.now(), {}, engine.deps.config);
    expect(result.tenants).toEqual({ created: 0, updated: 0, unchanged: 1, removed: 1, changed: ['acme: removed'] });
    expect(await alertOf()).toMatchObject({ id: opened.id, status: 'resolved', resolvedAt: engine.clock.now() });
    expect((await events(opened.id)).at(-1)).toMatchObject({ kind: 'resolved', actor: null, data: { by: 'tenant_disabled' } });
    expect((await notificationStory(t.db, opened.id)).filter((n) => n.kind === 'resolved').map((n) => n.destination)).toEqual(['slack:CACME', 'slack:CPLATFORM']);

    const runsBefore = (await t.db.selectFrom('runs').select('id').where('workflowId', '=', wf.id).execute()).length;
    for (let i = 0; i < 90; i++) {
      engine.clock.advance(minutes(1));
      await engine.step();
    }
    // Nothing was missed, escalated or opened while the tenant was gone.
    expect((await t.db.selectFrom('runs').select('id').where('workflowId', '=', wf.id).execute()).length).toBe(runsBefore);
    expect(await t.db.selectFrom('alerts').select(['id', 'status']).where('workflowId', '=', wf.id).execute()).toEqual([{ id: opened.id, status: 'resolved' }]);

    // Back in the file: watched again from the next tick to come, not caught up on the ninety minutes it was gone.
    const back = engine.clock.now();
    await syncWorkflowsFile(t.db, tenants(true), back, {}, engine.deps.config);
    const cursor = (await t.db.selectFrom('workflows').select('nextTickAt').where('id', '=', wf.id).executeTakeFirstOrThrow()).nextTickAt!;
    expect(cursor > back && cursor.getTime() - back.getTime() <= minutes(5)).toBe(true);
    engine.clock.advance(minutes(1));
    await engine.step();
    expect((await t.db.selectFrom('runs').select('id').where('workflowId', '=', wf.id).execute()).length).toBe(runsBefore);
  });

  it('a tenant removed from the file and brought back over the API: its workflows start from the next tick, none of the time it was gone is missed', async () => {
    const tenants = (withAcme: boolean) =>
      parseWorkflowsFile(JSON.stringify({ tenants: [...(withAcme ? [{ id: 'acme', name: 'Acme', channel: 'CACME' }] : []), { id: 'globex', name: 'Globex', channel: 'CGLOBEX' }], workflows: [] }));
    await syncWorkflowsFile(t.db, tenants(true), START, {}, engine.deps.config);
    await t.db.updateTable('workflows').set({ nextTickAt: new Date(START.getTime() + minutes(5)) }).where('id', '=', wf.id).execute();
    await engine.step(); // the monitor is up
    await syncWorkflowsFile(t.db, tenants(false), engine.clock.now(), {}, engine.deps.config);
    for (let i = 0; i < 90; i++) {
      engine.clock.advance(minutes(1));
      await engine.step();
    }
    const back = engine.clock.now();
    expect(await putTenant(engine.deps, { id: 'acme', name: 'Acme', channel: 'CACME' })).toMatchObject({ kind: 'created' });
    const cursor = (await t.db.selectFrom('workflows').select('nextTickAt').where('id', '=', wf.id).executeTakeFirstOrThrow()).nextTickAt!;
    expect(cursor > back && cursor.getTime() - back.getTime() <= minutes(5)).toBe(true);
    engine.clock.advance(minutes(1));
    await engine.step();
    // The eighteen ticks of the ninety minutes are not missed failures, and nothing opens.
    expect(await t.db.selectFrom('runs').select('status').where('workflowId', '=', wf.id).execute()).toEqual([]);
    expect(await t.db.selectFrom('alerts').select('id').where('workflowId', '=', wf.id).execute()).toEqual([]);
  });

  it('over the API: DELETE resolves with by: workflow_deleted; pause/resume endpoints are tenant-scoped', async () => {
    await failNext(3);
    const opened = await alertOf();
    const app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock: engine.clock });
    try {
      const admin = apiClient(app.url, ADMIN);
      const globex = apiClient(app.url, (await admin('POST', '/api/v1/tenants/globex/token')).body.token);
      const acmeApi = apiClient(app.url, (await admin('POST', '/api/v1/tenants/acme/token')).body.token);

      expect((await globex('POST', '/api/v1/workflows/acme/check/pause', {})).status).toBe(404);
      const bad = await acmeApi('POST', '/api/v1/workflows/acme/check/pause', { reason: 5 });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toContain('reason');
      const paused = await acmeApi('POST', '/api/v1/workflows/acme/check/pause', { reason: 'migrating' });
      expect(paused).toMatchObject({ status: 200, body: { paused: true, pausedBy: 'api:acme', pauseReason: 'migrating', openAlert: { id: opened.id } } });
      expect((await acmeApi('POST', '/api/v1/workflows/acme/check/pause')).status).toBe(409);
      expect((await acmeApi('POST', '/api/v1/workflows/acme/check/resume')).body).toMatchObject({ paused: false });

      expect((await globex('DELETE', '/api/v1/workflows/acme/check')).status).toBe(404);
      expect((await alertOf()).status).toBe('open');
      expect((await acmeApi('DELETE', '/api/v1/workflows/acme/check')).status).toBe(200);
      expect(await alertOf()).toMatchObject({ status: 'resolved' });
      expect((await events(opened.id)).at(-1)).toMatchObject({ kind: 'resolved', actor: 'api:acme', data: { by: 'workflow_deleted' } });
    } finally {
      await app.stop();
    }
  });
});

describe('a run still going when its workflow stops being watched', () => {
  it('ends in the ledger after a DELETE but opens no new alert: the resolved one stays the last word', async () => {
    await failNext(3);
    const opened = await alertOf();
    engine.clock.set(new Date(tickAt.getTime() + minutes(5)));
    const started = await ingestRun(engine.deps, { tenant: 'acme', workflow: 'check', status: 'running' }, acme);
    if (started.kind !== 'created') throw new Error(`not created: ${started.kind}`);
    expect(await deleteWorkflow(engine.deps, 'acme', 'check', acme)).toEqual({ kind: 'deleted' });
    expect(await alertOf()).toMatchObject({ id: opened.id, status: 'resolved' });

    engine.clock.advance(minutes(2));
    expect(await finishReportedRun(engine.deps, started.run.id, { status: 'failed', error: 'check failed: 17 rows missing' }, acme)).toMatchObject({ kind: 'finished' });
    await engine.step();
    expect(await t.db.selectFrom('runs').select(['status', 'processedAt']).where('id', '=', started.run.id).executeTakeFirstOrThrow()).toEqual({ status: 'failed', processedAt: engine.clock.now() });
    expect(await t.db.selectFrom('alerts').select(['id', 'status']).where('workflowId', '=', wf.id).execute()).toEqual([{ id: opened.id, status: 'resolved' }]);
    expect((await events(opened.id)).at(-1)).toMatchObject({ kind: 'resolved', data: { by: 'workflow_deleted' } });
  });

  it('a retry in flight when it is disabled gets no further attempt: its tick gets the verdict, and nothing opens', async () => {
    const nightly = await makeWorkflow(t.db, {
      name: 'nightly',
      cron: '0 2 * * *',
      mode: 'managed',
      source: 'api',
      launcher: JSON.stringify({ kind: 'command', command: 'true' }),
      policy: JSON.stringify({ retries: 2 }),
    });
    engine.launcher.script(nightly.id, { status: 'failed', error: 'connection reset' }, 'hold');
    const original = await fireTick(engine, nightly, START);
    await engine.drain();
    const attempt = await t.db.selectFrom('runs').selectAll().where('originalRunId', '=', original.id).executeTakeFirstOrThrow();
    expect(attempt).toMatchObject({ attempt: 2, status: 'running' });

    expect(await deleteWorkflow(engine.deps, 'acme', 'nightly', acme)).toEqual({ kind: 'deleted' });
    await finishRun(engine.deps, attempt.id, { status: 'failed', error: 'connection reset' });
    await engine.drain();
    expect(engine.launcher.launched.map((l) => l.attempt)).toEqual([1, 2]);
    expect(await t.db.selectFrom('runs').select(['status', 'outcomeNote']).where('id', '=', original.id).executeTakeFirstOrThrow()).toEqual({ status: 'failed', outcomeNote: 'failed on all 2 attempts' });
    expect(await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', nightly.id).execute()).toEqual([]);
  });
});

describe('Run now on a workflow no longer watched', () => {
  it('asked after a DELETE, or after its tenant left the file (a click or request that found it just before), starts nothing', async () => {
    const nightly = await makeWorkflow(t.db, { name: 'nightly', cron: '0 2 * * *', mode: 'managed', source: 'api', launcher: JSON.stringify({ kind: 'command', command: 'true' }) });
    const other = await makeWorkflow(t.db, { tenantId: 'globex', name: 'other', cron: '0 2 * * *', mode: 'managed', source: 'api', launcher: JSON.stringify({ kind: 'command', command: 'true' }) });
    expect(await deleteWorkflow(engine.deps, 'acme', 'nightly', acme)).toEqual({ kind: 'deleted' });
    await t.db.updateTable('tenants').set({ enabled: false }).where('id', '=', 'globex').execute();
    const me = { user: 'U0ME' };
    expect(await requestRunNow(engine.deps, { workflowId: nightly.id, actor: me, scope: acme })).toEqual({ kind: 'not_found' });
    expect(await requestRunNow(engine.deps, { workflowId: other.id, actor: me, scope: {} })).toEqual({ kind: 'not_found' });
    expect(engine.launcher.launched).toEqual([]);
    expect(await t.db.selectFrom('runs').select('id').where('workflowId', 'in', [nightly.id, other.id]).execute()).toEqual([]);
  });
});

describe('Run now racing the removal of its tenant', () => {
  it('asked while DELETE /tenants/{id} is committing: waits for it and starts nothing (was: read the tenant as it was and launched)', async () => {
    const other = await makeWorkflow(t.db, { tenantId: 'globex', name: 'other', cron: '0 2 * * *', mode: 'managed', source: 'api', launcher: JSON.stringify({ kind: 'command', command: 'true' }) });
    const pool = createPool(t.url, 1);
    const holder = await pool.connect();
    try {
      // The removal's transaction, between its update of the tenant row and its commit (deleteTenant, src/services/tenants-api.ts).
      await holder.query('begin');
      await holder.query("update tenants set enabled = false, api_token_hash = null where id = 'globex'");
      const asked = requestRunNow(engine.deps, { workflowId: other.id, actor: { user: 'U0ME' }, scope: {} });
      let settled = false;
      void asked.then(() => (settled = true), () => (settled = true));
      await eventually(async () => {
        if (settled) return;
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(t.db);
        expect(rows[0]!.n).toBe(1);
      });
      await holder.query('commit');
      expect(await asked).toEqual({ kind: 'not_found' });
      expect(engine.launcher.launched).toEqual([]);
      expect(await t.db.selectFrom('runs').select('id').where('workflowId', '=', other.id).execute()).toEqual([]);
    } finally {
      await holder.query('rollback').catch(() => {});
      holder.release();
      await pool.end();
    }
  });
});

describe('the maintenance field in the workflows file', () => {
  it('is stored as rules in milliseconds, the workflow\'s zone by default', async () => {
    const parsed = parseWorkflowsFile(
      JSON.stringify({
        tenants: [{ id: 'acme', name: 'Acme', maintenance: [{ cron: '0 3 * * 0', duration: '1h30m', reason: 'patching' }] }],
        workflows: [{ tenant: 'acme', name: 'filed', cron: '0 2 * * *', timezone: 'Europe/Berlin', maintenance: [{ cron: '0 1 * * *', durationMinutes: 120 }] }],
      }),
    );
    await syncWorkflowsFile(t.db, parsed, START, {});
    expect((await t.db.selectFrom('workflows').select('maintenance').where('name', '=', 'filed').executeTakeFirstOrThrow()).maintenance).toEqual([
      { cron: '0 1 * * *', timezone: 'Europe/Berlin', durationMs: 7_200_000 },
    ]);
    expect((await t.db.selectFrom('tenants').select('maintenance').where('id', '=', 'acme').executeTakeFirstOrThrow()).maintenance).toEqual([
      { cron: '0 3 * * 0', timezone: 'UTC', durationMs: 5_400_000, reason: 'patching' },
    ]);
  });

  it('names the path and the value of a bad window', () => {
    const bad = (m: unknown) => {
      try {
        parseWorkflowsFile(JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme' }], workflows: [{ tenant: 'acme', name: 'w', cron: '0 2 * * *', maintenance: [m] }] }));
      } catch (error) {
        expect(error).toBeInstanceOf(WorkflowsFileError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(bad({ cron: '0 3 * * *', duration: 'soon' })).toMatch(/workflows\[0\]\.maintenance\[0\]\.duration.*soon/s);
    expect(bad({ cron: '0 3 * * *' })).toMatch(/workflows\[0\]\.maintenance\[0\]\.durationMinutes/);
    expect(bad({ cron: '0 3 * * *', duration: '2h', durationMinutes: 120 })).toMatch(/workflows\[0\]\.maintenance\[0\]\.duration/);
    expect(bad({ cron: 'every night', durationMinutes: 60 })).toMatch(/workflows\[0\]\.maintenance\[0\]\.cron.*every night/s);
    expect(bad({ cron: '0 3 * * *', durationMinutes: 60, timezone: 'Mars/Olympus' })).toMatch(/maintenance\[0\]\.timezone.*Mars\/Olympus/s);
  });
});
