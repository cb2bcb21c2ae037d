import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseWorkflowsFile, WorkflowsFileError } from '../../src/config/workflows-file.js';
import type { Workflow } from '../../src/db/schema.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import { recordPing } from '../../src/services/pings.js';
import { deleteWorkflow } from '../../src/services/workflows-api.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, fireTick, notificationStory, reportRun, type Engine } from '../helpers/engine-harness.js';
import { finishRun } from '../../src/ledger/runs.js';
import { makeWorkflow, minutes } from '../helpers/factories.js';
import { startTestApp } from '../helpers/app.js';
import { apiClient } from '../helpers/http-api.js';

/**
 * A workflow renamed in the file, or moved to another tenant, is a new
 * workflow (workflows are named by tenant and name): the old one is disabled
 * with its history, its open alert resolved in its own tenant's channel.
 * A fixed `pingKey` kept across the edit moves to the new one.
 */

const START = new Date('2026-03-10T02:00:00Z');
const KEY = 'fixed-ping-key-0123456789abcdef';
const ADMIN = 'admin-token-0123456789abcdef';
const tenants = [
  { id: 'acme', name: 'Acme', channel: 'CACME' },
  { id: 'globex', name: 'Globex', channel: 'CGLOBEX' },
];
const file = (...workflows: { tenant: string; name: string; pingKey?: string }[]) =>
  parseWorkflowsFile(JSON.stringify({ tenants, workflows: workflows.map((w) => ({ cron: '*/5 * * * *', ...w })) }));

let t: TestDatabase;
let engine: Engine;

beforeEach(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, START);
});
afterEach(async () => t.drop());

const workflowNamed = (tenantId: string, name: string) => t.db.selectFrom('workflows').selectAll().where('tenantId', '=', tenantId).where('name', '=', name).executeTakeFirstOrThrow();

async function openAlertOn(wf: Workflow) {
  let tick = START;
  for (let i = 0; i < 3; i++) {
    tick = new Date(tick.getTime() + minutes(5));
    engine.clock.set(new Date(tick.getTime() + minutes(1)));
    await reportRun(t.db, wf, tick, { status: 'failed', error: 'check failed' }, engine.clock.now());
    await engine.step();
  }
  return t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).where('status', '=', 'open').executeTakeFirstOrThrow();
}

describe('a workflow renamed or moved in the file, with its fixed ping key', () => {
  for (const [how, to] of [
    ['renamed', { tenant: 'acme', name: 'check-v2' }],
    ['moved to another tenant', { tenant: 'globex', name: 'check' }],
  ] as const) {
    it(`${how}: a new workflow takes the key; the old one keeps its history, its alert resolved in its own channel`, async () => {
      await syncWorkflowsFile(t.db, file({ tenant: 'acme', name: 'check', pingKey: KEY }), START, {}, engine.deps.config);
      const old = await workflowNamed('acme', 'check');
      const alert = await openAlertOn(old);

      const result = await syncWorkflowsFile(t.db, file({ ...to, pingKey: KEY }), engine.clock.now(), {}, engine.deps.config);
      expect(result.workflows).toMatchObject({ created: 1, updated: 0, unchanged: 0, removed: 1 });

      const renamed = await workflowNamed(to.tenant, to.name);
      const before = await workflowNamed('acme', 'check');
      expect(renamed).toMatchObject({ pingKey: KEY, enabled: true });
      expect(renamed.id).not.toBe(old.id);
      expect(before).toMatchObject({ id: old.id, enabled: false });
      expect(before.pingKey).not.toBe(KEY);
      // History stays with the old name; the new one starts empty.
      expect((await t.db.selectFrom('runs').select('id').where('workflowId', '=', old.id).execute()).length).toBe(3);
      expect(await t.db.selectFrom('runs').select('id').where('workflowId', '=', renamed.id).execute()).toEqual([]);
      // The old alert is closed where it was told, never carried into the new tenant's channel.
      expect(await t.db.selectFrom('alerts').select(['id', 'status']).where('id', '=', alert.id).executeTakeFirstOrThrow()).toEqual({ id: alert.id, status: 'resolved' });
      const story = await notificationStory(t.db, alert.id);
      expect(story.filter((n) => n.kind === 'resolved').map((n) => n.destination)).toEqual(['slack:CACME', 'slack:CPLATFORM']);
      expect(story.map((n) => n.destination)).not.toContain('slack:CGLOBEX');
      expect(story.find((n) => n.kind === 'resolved')!.data).toMatchObject({ by: 'workflow_disabled', how: 'removed_from_file' });

      // The job pinging with the key now reports to the new workflow.
      const ping = await recordPing(engine.deps, { key: KEY, signal: { kind: 'fail' }, body: 'boom' });
      expect(ping).toMatchObject({ kind: 'recorded', run: { workflowId: renamed.id } });
    });
  }

  it('a key moved from one entry of the file to another goes with it; the entry that gave it up gets a fresh one', async () => {
    await syncWorkflowsFile(t.db, file({ tenant: 'acme', name: 'a', pingKey: KEY }, { tenant: 'acme', name: 'b' }), START, {});
    await syncWorkflowsFile(t.db, file({ tenant: 'acme', name: 'a' }, { tenant: 'acme', name: 'b', pingKey: KEY }), START, {});
    const [a, b] = [await workflowNamed('acme', 'a'), await workflowNamed('acme', 'b')];
    expect(b.pingKey).toBe(KEY);
    expect(a.pingKey).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    expect(a.pingKey).not.toBe(KEY);
  });

  it("a key held by a live workflow managed over the API is refused, naming the path; nothing is synced. Deleted, it is free", async () => {
    await syncWorkflowsFile(t.db, file(), START, {});
    const api = await makeWorkflow(t.db, { tenantId: 'acme', name: 'api-made', cron: '0 * * * *', source: 'api', pingKey: KEY });
    let error: unknown;
    await syncWorkflowsFile(t.db, file({ tenant: 'globex', name: 'mine', pingKey: KEY }), START, {}).catch((e) => (error = e));
    expect(error).toBeInstanceOf(WorkflowsFileError);
    expect((error as WorkflowsFileError).problems).toEqual([expect.stringMatching(/workflows\[0\]\.pingKey: ping key is already the ping key of workflow "acme\/api-made", managed over the API/)]);
    expect(await t.db.selectFrom('workflows').select('name').where('tenantId', '=', 'globex').execute()).toEqual([]);

    await t.db.updateTable('workflows').set({ enabled: false }).where('id', '=', api.id).execute();
    await syncWorkflowsFile(t.db, file({ tenant: 'globex', name: 'mine', pingKey: KEY }), START, {});
    expect((await workflowNamed('globex', 'mine')).pingKey).toBe(KEY);
  });

  it('a key held by an API workflow whose tenant is gone (removed over the API) moves too: no ping reached it', async () => {
    await syncWorkflowsFile(t.db, file(), START, {});
    await t.db.insertInto('tenants').values({ id: 'initech', name: 'Initech', channel: null, source: 'api', enabled: false, apiTokenHash: null, createdAt: START, updatedAt: START }).execute();
    const orphan = await makeWorkflow(t.db, { tenantId: 'initech', name: 'api-made', cron: '0 * * * *', source: 'api', pingKey: KEY });
    await syncWorkflowsFile(t.db, file({ tenant: 'globex', name: 'mine', pingKey: KEY }), START, {});
    expect((await workflowNamed('globex', 'mine')).pingKey).toBe(KEY);
    expect((await workflowNamed('initech', 'api-made')).pingKey).not.toBe(orphan.pingKey);
  });

  it('one key given to two entries of the file is a problem of the file, naming both', () => {
    let error: unknown;
    try {
      parseWorkflowsFile(JSON.stringify({ tenants, workflows: [{ tenant: 'acme', name: 'a', cron: '0 * * * *', pingKey: KEY }, { tenant: 'globex', name: 'b', cron: '0 * * * *', pingKey: KEY }] }), 'wf.json');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(WorkflowsFileError);
    expect((error as WorkflowsFileError).problems).toEqual([expect.stringMatching(/^wf\.json:1: workflows\[1\]\.pingKey: ping key already given to workflows\[0\]; each workflow needs its own/)]);
  });
});

describe('the file declaring what the API made', () => {
  it('the file wins and says so: the API-made tenant and workflow are listed as taken over (the start warns of them)', async () => {
    await syncWorkflowsFile(t.db, file(), START, {});
    await t.db.insertInto('tenants').values({ id: 'initech', name: 'Initech', channel: 'CINIT', source: 'api', apiTokenHash: null, createdAt: START, updatedAt: START }).execute();
    await makeWorkflow(t.db, { tenantId: 'acme', name: 'load', cron: '0 * * * *', source: 'api', policy: JSON.stringify({ alertAfter: 7 }) });
    const declared = parseWorkflowsFile(
      JSON.stringify({ tenants: [...tenants, { id: 'initech', name: 'Initech Corp', channel: 'CINIT' }], workflows: [{ tenant: 'acme', name: 'load', cron: '*/10 * * * *' }] }),
    );
    const result = await syncWorkflowsFile(t.db, declared, START, {});
    expect(result.takenOver).toEqual({ tenants: ['initech'], workflows: ['acme/load'] });
    expect(await workflowNamed('acme', 'load')).toMatchObject({ source: 'file', cron: '*/10 * * * *', policy: {} });
    // Synced again: nothing is taken over any more.
    expect((await syncWorkflowsFile(t.db, declared, START, {})).takenOver).toEqual({ tenants: [], workflows: [] });
  });
});

describe('two replicas starting at once with different files (a rolling deploy)', () => {
  it('the syncs take turns: both finish, and the database holds exactly one of the two files, the last to sync', async () => {
    await syncWorkflowsFile(t.db, file({ tenant: 'acme', name: 'old' }), START, {});
    const older = file({ tenant: 'acme', name: 'old' });
    const newer = file({ tenant: 'acme', name: 'new' }, { tenant: 'globex', name: 'other' });
    for (let round = 0; round < 5; round++) {
      const done: string[] = [];
      await Promise.all([
        syncWorkflowsFile(t.db, older, START, {}).then(() => done.push('older')),
        syncWorkflowsFile(t.db, newer, START, {}).then(() => done.push('newer')),
      ]);
      const enabled = (await t.db.selectFrom('workflows').select(['tenantId', 'name']).where('enabled', '=', true).orderBy('name').execute()).map((w) => `${w.tenantId}/${w.name}`);
      expect(enabled).toEqual(done.at(-1) === 'older' ? ['acme/old'] : ['acme/new', 'globex/other']);
    }
  });
});

describe('a workflow deleted over the API and created again by the same name', () => {
  it('is the same workflow back (201: it did not exist a moment before): its history, its resolved alert and its ping key; judged from the deletion on', async () => {
    const app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock: engine.clock });
    try {
      const admin = apiClient(app.url, ADMIN);
      await syncWorkflowsFile(t.db, file(), START, {}, engine.deps.config);
      expect((await admin('PUT', '/api/v1/workflows/acme/check', { cron: '*/5 * * * *' })).status).toBe(201);
      const first = await workflowNamed('acme', 'check');
      const alert = await openAlertOn(first);
      expect((await admin('DELETE', '/api/v1/workflows/acme/check')).status).toBe(200);
      expect((await admin('GET', '/api/v1/workflows/acme/check')).status).toBe(404);

      const again = await admin('PUT', '/api/v1/workflows/acme/check', { cron: '*/5 * * * *' });
      expect(again.status).toBe(201);
      expect(again.body.lastRuns).toHaveLength(3);
      expect(again.body.openAlert).toBeNull();
      expect(again.body.ping.url).toContain(first.pingKey);
      expect(await workflowNamed('acme', 'check')).toMatchObject({ id: first.id, enabled: true, pingKey: first.pingKey });
      expect(await t.db.selectFrom('alerts').select(['id', 'status']).where('workflowId', '=', first.id).execute()).toEqual([{ id: alert.id, status: 'resolved' }]);
      // Its streak before the deletion opens nothing: two more failures are two, not five.
      const back = await workflowNamed('acme', 'check');
      for (const m of [20, 25]) {
        const tick = new Date(START.getTime() + minutes(m));
        engine.clock.set(new Date(tick.getTime() + minutes(1)));
        await reportRun(t.db, back, tick, { status: 'failed', error: 'check failed' }, engine.clock.now());
        await engine.step();
      }
      expect(await t.db.selectFrom('alerts').select('id').where('workflowId', '=', first.id).where('status', '=', 'open').execute()).toEqual([]);
      // Replacing it now is an update.
      expect((await admin('PUT', '/api/v1/workflows/acme/check', { cron: '*/5 * * * *' })).status).toBe(200);
    } finally {
      await app.stop();
    }
  });
});

describe('PagerDuty hears the end of an incident whose workflow or tenant goes away', () => {
  const paged = (workflows: { tenant: string; name: string; cron?: string }[], withAcme = true) =>
    parseWorkflowsFile(
      JSON.stringify({
        tenants: [
          ...(withAcme ? [{ id: 'acme', name: 'Acme', channel: 'CACME', destinations: [{ kind: 'pagerduty', routingKey: 'R0123456789abcdef0123456789abcdef' }] }] : []),
          { id: 'globex', name: 'Globex', channel: 'CGLOBEX' },
        ],
        workflows: workflows.map((w) => ({ cron: '0 2 * * *', ...w })),
      }),
    );

  for (const how of ['the workflow removed from the file', 'its tenant removed from the file'] as const) {
    it(`${how}: the page is resolved, with the Slack threads`, async () => {
      await syncWorkflowsFile(t.db, paged([{ tenant: 'acme', name: 'nightly' }]), START, {}, engine.deps.config);
      const wf = await workflowNamed('acme', 'nightly');
      engine.clock.set(new Date(START.getTime() + minutes(1)));
      await reportRun(t.db, wf, START, { status: 'failed', error: 'warehouse down' }, engine.clock.now());
      await engine.step();
      const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
      expect(alert).toMatchObject({ status: 'open', severity: 'critical' });
      const pd = (await notificationStory(t.db, alert.id)).find((n) => n.destination.startsWith('pagerduty:'))!;
      expect(pd.kind).toBe('opened');

      await syncWorkflowsFile(t.db, how === 'the workflow removed from the file' ? paged([]) : paged([], false), engine.clock.now(), {}, engine.deps.config);
      const resolved = (await notificationStory(t.db, alert.id)).filter((n) => n.kind === 'resolved');
      expect(resolved.map((n) => n.destination).sort()).toEqual([pd.destination, 'slack:CACME', 'slack:CPLATFORM'].sort());
      expect(resolved[0]!.data).toMatchObject({ by: 'workflow_disabled' });
    });
  }
});

describe('a tenant removed over the API (DELETE /api/v1/tenants/{id})', () => {
  it('admin only, not one the file declares; its alerts resolve, its token, pings and channel are released; PUT brings it back (201)', async () => {
    const app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock: engine.clock });
    try {
      const admin = apiClient(app.url, ADMIN);
      await syncWorkflowsFile(t.db, file(), START, {}, engine.deps.config);
      expect((await admin('PUT', '/api/v1/tenants/initech', { name: 'Initech', channel: 'CINIT' })).status).toBe(201);
      const token = (await admin('POST', '/api/v1/tenants/initech/token')).body.token as string;
      const initech = apiClient(app.url, token);
      expect((await initech('PUT', '/api/v1/workflows/initech/check', { cron: '*/5 * * * *' })).status).toBe(201);
      const wf = await workflowNamed('initech', 'check');
      const alert = await openAlertOn(wf);

      expect((await initech('DELETE', '/api/v1/tenants/initech')).status).toBe(403);
      expect((await admin('DELETE', '/api/v1/tenants/acme')).body).toMatchObject({ error: 'owned_by_file' });
      expect((await admin('DELETE', '/api/v1/tenants/initech')).body).toEqual({ deleted: true, id: 'initech' });

      expect(await t.db.selectFrom('alerts').select('status').where('id', '=', alert.id).executeTakeFirstOrThrow()).toEqual({ status: 'resolved' });
      const events = await t.db.selectFrom('alertEvents').select(['kind', 'actor', 'data']).where('alertId', '=', alert.id).orderBy('id').execute();
      expect(events.at(-1)).toMatchObject({ kind: 'resolved', actor: 'api:admin', data: { by: 'tenant_disabled' } });
      expect((await notificationStory(t.db, alert.id)).filter((n) => n.kind === 'resolved').map((n) => n.destination)).toContain('slack:CINIT');
      expect((await initech('GET', '/api/v1/workflows')).status).toBe(401);
      expect(await recordPing(engine.deps, { key: wf.pingKey, signal: { kind: 'fail' } })).toEqual({ kind: 'not_found' });
      expect((await admin('GET', '/api/v1/tenants')).body.tenants.map((x: { id: string }) => x.id)).toEqual(['acme', 'globex']);
      expect((await admin('PUT', '/api/v1/tenants/hooli', { name: 'Hooli', channel: 'CINIT' })).status).toBe(201);
      expect((await admin('DELETE', '/api/v1/tenants/initech')).status).toBe(404);

      // Back: created again, with its workflows and their history, counted from the next tick.
      const back = await admin('PUT', '/api/v1/tenants/initech', { name: 'Initech', channel: 'CINIT2' });
      expect(back.status).toBe(201);
      // Its old token was revoked with it, not revived: a new one is minted.
      expect(back.body.hasToken).toBe(false);
      expect((await initech('GET', '/api/v1/workflows')).status).toBe(401);
      expect((await admin('GET', '/api/v1/workflows/initech/check')).body.lastRuns).toHaveLength(3);
    } finally {
      await app.stop();
    }
  });
});

describe("a workflow's ping key once it is deleted", () => {
  it('is refused, the end of a run it started too: that run ends timed out; brought back, the key works again', async () => {
    await syncWorkflowsFile(t.db, file(), START, {}, engine.deps.config);
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'pinged', cron: '0 2 * * *', source: 'api', policy: JSON.stringify({ timeoutSeconds: 600 }) });
    engine.clock.set(START);
    const started = await recordPing(engine.deps, { key: wf.pingKey, signal: { kind: 'start' } });
    expect(started).toMatchObject({ kind: 'recorded', run: { status: 'running' } });
    expect(await deleteWorkflow(engine.deps, 'acme', 'pinged', {})).toEqual({ kind: 'deleted' });
    expect(await recordPing(engine.deps, { key: wf.pingKey, signal: { kind: 'success' } })).toEqual({ kind: 'not_found' });
    engine.clock.advance(minutes(11));
    await engine.step();
    expect(await t.db.selectFrom('runs').select(['status', 'error']).where('workflowId', '=', wf.id).execute()).toEqual([{ status: 'failed', error: 'timed out' }]);
    expect(await t.db.selectFrom('alerts').select('id').where('workflowId', '=', wf.id).execute()).toEqual([]);
    await t.db.updateTable('workflows').set({ enabled: true }).where('id', '=', wf.id).execute();
    expect(await recordPing(engine.deps, { key: wf.pingKey, signal: { kind: 'start' } })).toMatchObject({ kind: 'recorded' });
  });
});

describe('a managed workflow made observed (its launcher removed from the file) while a run of it is going', () => {
  it('the run goes on and its end is its tick\'s verdict (no retry: nothing to launch it with); the tick is not also missed', async () => {
    const managed = (launcher: boolean) =>
      parseWorkflowsFile(
        JSON.stringify({
          tenants,
          workflows: [{ tenant: 'acme', name: 'nightly', cron: '0 2 * * *', policy: { retries: 2 }, ...(launcher ? { launcher: { kind: 'command', command: 'true' } } : {}) }],
        }),
      );
    await syncWorkflowsFile(t.db, managed(true), new Date(START.getTime() - minutes(60)), {}, engine.deps.config);
    const wf = await workflowNamed('acme', 'nightly');
    engine.launcher.script(wf.id, 'hold');
    const original = await fireTick(engine, wf, START);
    await engine.drain();

    engine.clock.set(new Date(START.getTime() + 10_000));
    await syncWorkflowsFile(t.db, managed(false), engine.clock.now(), {}, engine.deps.config);
    expect(await workflowNamed('acme', 'nightly')).toMatchObject({ mode: 'observed', launcher: null });
    // The run is another replica's (still on the old file); inside its lease, as that replica's supervisor keeps it.
    engine.clock.advance(10_000);
    await engine.step();
    expect(await t.db.selectFrom('runs').select(['id', 'status']).where('workflowId', '=', wf.id).execute()).toEqual([{ id: original.id, status: 'running' }]);
    expect((await workflowNamed('acme', 'nightly')).nextTickAt).toEqual(new Date('2026-03-11T02:00:00Z'));

    await finishRun(engine.deps, original.id, { status: 'failed', error: 'warehouse down' });
    await engine.drain();
    expect(await t.db.selectFrom('runs').select(['id', 'status', 'attempt']).where('workflowId', '=', wf.id).execute()).toEqual([{ id: original.id, status: 'failed', attempt: 1 }]);
    expect(engine.launcher.launched.map((l) => l.attempt)).toEqual([1]);
    expect(await t.db.selectFrom('alerts').select(['status', 'severity']).where('workflowId', '=', wf.id).execute()).toEqual([{ status: 'open', severity: 'critical' }]);
  });
});

describe("a tenant removed from the file and brought back over the API", () => {
  it('comes back without its old token (revoked with it, not revived)', async () => {
    const TOKEN = 'acme-file-token-0123456789abcdef';
    const withAcme = (on: boolean) =>
      parseWorkflowsFile(JSON.stringify({ tenants: [...(on ? [{ id: 'acme', name: 'Acme', channel: 'CACME', apiTokenEnv: 'ACME_TOKEN' }] : []), tenants[1]], workflows: [] }), 'wf.json', { ACME_TOKEN: TOKEN });
    await syncWorkflowsFile(t.db, withAcme(true), START, { ACME_TOKEN: TOKEN });
    const app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock: engine.clock });
    try {
      const acmeApi = apiClient(app.url, TOKEN);
      expect((await acmeApi('GET', '/api/v1/tenants')).status).toBe(200);
      await syncWorkflowsFile(t.db, withAcme(false), START, {});
      expect((await acmeApi('GET', '/api/v1/tenants')).status).toBe(401);
      expect((await apiClient(app.url, ADMIN)('PUT', '/api/v1/tenants/acme', { name: 'Acme', channel: 'CACME' })).body).toMatchObject({ hasToken: false });
      expect((await acmeApi('GET', '/api/v1/tenants')).status).toBe(401);
    } finally {
      await app.stop();
    }
  });
});
