import { afterEach, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import type { Db } from '../../src/db/connect.js';
import { silentLogger } from '../../src/log.js';
import { RecordingSlackApi } from '../../src/replay/recording-slack-api.js';
import { createWebClient, webOutboxApi } from '../../src/slack/transport/slack-api.js';
import { createHeldBackNotes } from '../../src/slack/transport/held-back-notes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * A downstream held back by ANOTHER tenant's upstream incident is told so in
 * its own channel, once per incident, and told when the incident ends; the
 * upstream's name, tenant and error never cross (docs/alerts.md,
 * docs/security.md). Real database, ManualClock, Slack at the HTTP boundary.
 */

let t: TestDatabase;
let slack: RecordingSlackApi | undefined;
let engine: Engine;
afterEach(async () => {
  await slack?.close();
  slack = undefined;
  await t?.drop();
});

async function setup() {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'data', name: 'Data Platform', channel: 'CDATA' });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  engine = createEngine(t.db, '2026-03-10T01:59:00Z');
  slack = await RecordingSlackApi.start({ clock: engine.clock });
  const api = webOutboxApi(createWebClient('xoxb-test-token', { apiUrl: slack.url, timeoutMs: 2000, logger: silentLogger }));
  const notes = createHeldBackNotes(engine.deps, api);
  const warehouse = await makeWorkflow(t.db, { tenantId: 'data', name: 'warehouse', cron: '0 * * * *', policy: { alertAfter: 1 } });
  const report = await makeWorkflow(t.db, { tenantId: 'acme', name: 'etl-report', cron: '10 * * * *', policy: { alertAfter: 1 } });
  await dependsOn(t.db, report, warehouse);
  return { notes, warehouse, report };
}

async function dependsOn(db: Db, downstream: Workflow, ...upstream: Workflow[]) {
  await db.insertInto('workflowDependencies').values(upstream.map((u) => ({ workflowId: downstream.id, upstreamId: u.id }))).execute();
}

async function report(w: Workflow, iso: string, status: 'failed' | 'succeeded' = 'failed') {
  engine.clock.set(new Date(iso));
  await reportRun(t.db, w, new Date(iso), { status, ...(status === 'failed' ? { error: `${w.name}: disk full on wh-01` } : {}) }, engine.clock.now());
  await engine.drain();
}

/** Ticks the notes loop until it finds nothing: how many it posted (or tried to). */
async function tickNotes(notes: { tick(): Promise<boolean> }): Promise<number> {
  let n = 0;
  while (await notes.tick()) n++;
  return n;
}

const posts = (channel: string) => slack!.callsTo('chat.postMessage').filter((c) => c.channel === channel && c.outcome === 'ok');

it("tells the downstream's channel once that another tenant's upstream holds it back, and once when that incident ends, naming only its own workflow", async () => {
  const { notes, warehouse, report: etl } = await setup();
  await report(warehouse, '2026-03-10T02:00:00Z');
  await report(etl, '2026-03-10T02:10:00Z');
  expect(await t.db.selectFrom('alerts').select('workflowId').execute()).toEqual([{ workflowId: warehouse.id }]);
  expect(await tickNotes(notes)).toBe(1);
  const [held] = posts('CACME');
  expect(held!.threadTs).toBeUndefined();
  expect(held!.text).toMatch(/^\*etl-report\* is held back since .*: an upstream it depends on \(another tenant's workflow\) is failing/);
  expect(held!.text).toMatch(/You will hear here when that incident ends; if \*etl-report\* still fails afterwards, it alerts here as usual\./);

  // Held back again: nothing more (once per incident, not per run).
  await report(etl, '2026-03-10T03:10:00Z');
  expect(await tickNotes(notes)).toBe(0);
  expect(posts('CACME')).toHaveLength(1);

  // The upstream recovers: one more note, with what was held back.
  await report(warehouse, '2026-03-10T04:00:00Z', 'succeeded');
  expect(await tickNotes(notes)).toBe(1);
  expect(await tickNotes(notes)).toBe(0);
  const [, released] = posts('CACME');
  expect(released!.text).toBe("*etl-report* is no longer held back: the upstream incident (another tenant's workflow) has ended. Held back meanwhile: 2 failures. From now on its failures count here as usual.");

  // Nothing of the upstream crosses: not its name, tenant, error, alert id or thread.
  for (const c of posts('CACME')) {
    expect(JSON.stringify([c.text, c.blocks, c.metadata])).not.toMatch(/warehouse|wh-01|disk full|data|CDATA/i);
    expect(c.metadata?.event_payload).toMatchObject({ alert_id: 0, tenant: 'acme', workflow: 'etl-report' });
  }
  // The upstream tenant's channel hears nothing from this loop (its thread is the outbox's).
  expect(posts('CDATA')).toEqual([]);

  // A new incident is a new episode: told again.
  await report(warehouse, '2026-03-10T05:00:00Z');
  await report(etl, '2026-03-10T05:10:00Z');
  expect(await tickNotes(notes)).toBe(1);
  expect(posts('CACME')).toHaveLength(3);
});

it('says nothing for a same-tenant upstream (its thread, in the same channel, names the workflow) nor for a downstream removed meanwhile', async () => {
  const { notes, warehouse } = await setup();
  const load = await makeWorkflow(t.db, { tenantId: 'acme', name: 'load', cron: '0 * * * *', policy: { alertAfter: 1 } });
  const mart = await makeWorkflow(t.db, { tenantId: 'acme', name: 'mart', cron: '10 * * * *', policy: { alertAfter: 1 } });
  const gone = await makeWorkflow(t.db, { tenantId: 'acme', name: 'gone', cron: '10 * * * *', policy: { alertAfter: 1 } });
  await dependsOn(t.db, mart, load);
  await dependsOn(t.db, gone, warehouse);
  await report(load, '2026-03-10T02:00:00Z');
  await report(warehouse, '2026-03-10T02:00:00Z');
  await report(mart, '2026-03-10T02:10:00Z');
  await report(gone, '2026-03-10T02:10:00Z');
  expect(await t.db.selectFrom('upstreamBlocks').select('workflowId').orderBy('workflowId').execute()).toEqual([{ workflowId: mart.id }, { workflowId: gone.id }]);
  await t.db.updateTable('workflows').set({ enabled: false, removedAt: engine.clock.now() }).where('id', '=', gone.id).execute();
  expect(await tickNotes(notes)).toBe(0);
  expect(slack!.callsTo('chat.postMessage')).toEqual([]);
});

it('a downstream told it is held back, then disabled (or its tenant, whose channel may be another\'s now): its release is closed untold', async () => {
  const { notes, warehouse, report: etl } = await setup();
  await report(warehouse, '2026-03-10T02:00:00Z');
  await report(etl, '2026-03-10T02:10:00Z');
  expect(await tickNotes(notes)).toBe(1);
  await t.db.updateTable('tenants').set({ enabled: false }).where('id', '=', 'acme').execute();
  await report(warehouse, '2026-03-10T03:00:00Z', 'succeeded');
  expect(await tickNotes(notes)).toBe(1);
  expect(await tickNotes(notes)).toBe(0);
  expect(posts('CACME')).toHaveLength(1);
  expect(await t.db.selectFrom('upstreamBlocks').select('releasedNotedAt').executeTakeFirstOrThrow()).toEqual({ releasedNotedAt: new Date('2026-03-10T03:00:00Z') });
});

it('a post Slack refuses for now (rate limited) is given back and posted at the next look, once; one refused for good is dropped', async () => {
  const { notes, warehouse, report: etl } = await setup();
  await report(warehouse, '2026-03-10T02:00:00Z');
  await report(etl, '2026-03-10T02:10:00Z');
  slack!.failNext({ kind: 'ratelimited' }, { method: 'chat.postMessage', channel: 'CACME' });
  // Given back: this look ends there (no retry at once), the next one posts it.
  expect(await notes.tick()).toBe(false);
  expect(posts('CACME')).toEqual([]);
  expect(await tickNotes(notes)).toBe(1);
  expect(posts('CACME')).toHaveLength(1);

  // Refused for good (an archived channel): logged and dropped, not tried again.
  await report(warehouse, '2026-03-10T03:00:00Z', 'succeeded');
  slack!.failNext({ kind: 'platform_error', error: 'is_archived' }, { method: 'chat.postMessage', channel: 'CACME' });
  expect(await tickNotes(notes)).toBe(1);
  expect(await tickNotes(notes)).toBe(0);
  expect(slack!.callsTo('chat.postMessage').map((c) => c.outcome)).toEqual(['ratelimited', 'ok', 'is_archived']);
});

it('two replicas looking at once post a note once; a downstream in shadow (held by a shadow upstream) is told on the platform channel only, marked', async () => {
  const { notes, warehouse, report: etl } = await setup();
  await t.db.updateTable('tenants').set({ shadow: true }).where('id', 'in', ['data', 'acme']).execute();
  const api = webOutboxApi(createWebClient('xoxb-test-token', { apiUrl: slack!.url, timeoutMs: 2000, logger: silentLogger }));
  const other = createHeldBackNotes(engine.deps, api); // another replica: its own loop and client, the same database and Slack
  await report(warehouse, '2026-03-10T02:00:00Z');
  await report(etl, '2026-03-10T02:10:00Z');
  await Promise.all([tickNotes(notes), tickNotes(other)]);
  expect(posts('CACME')).toEqual([]);
  expect(posts('CPLATFORM').map((c) => c.text)).toEqual([expect.stringMatching(/^Shadow · \*etl-report\* is held back since /)]);
});

it("a shared upstream holding back several of a tenant's workflows tells that channel once, naming them all; another tenant's channel gets its own note", async () => {
  const { notes, warehouse, report: etl } = await setup();
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
  const mart = await makeWorkflow(t.db, { tenantId: 'acme', name: 'mart', cron: '10 * * * *', policy: { alertAfter: 1 } });
  const billing = await makeWorkflow(t.db, { tenantId: 'globex', name: 'billing', cron: '10 * * * *', policy: { alertAfter: 1 } });
  await dependsOn(t.db, mart, warehouse);
  await dependsOn(t.db, billing, warehouse);
  await report(warehouse, '2026-03-10T02:00:00Z');
  for (const w of [etl, mart, billing]) await report(w, '2026-03-10T02:10:00Z');
  expect(await tickNotes(notes)).toBe(2);
  expect(posts('CACME').map((c) => c.text)).toEqual([
    expect.stringMatching(/^\*etl-report\* and \*mart\* are held back since .*: an upstream they depend on \(another tenant's workflow\) is failing, so their failures open no alert here/),
  ]);
  expect(posts('CGLOBEX').map((c) => c.text)).toEqual([expect.stringMatching(/^\*billing\* is held back since /)]);

  await report(mart, '2026-03-10T03:10:00Z');
  await report(warehouse, '2026-03-10T04:00:00Z', 'succeeded');
  expect(await tickNotes(notes)).toBe(2);
  expect(posts('CACME').at(-1)!.text).toBe(
    "*etl-report* and *mart* are no longer held back: the upstream incident (another tenant's workflow) has ended. Held back meanwhile: 3 failures. From now on their failures count here as usual.",
  );
  expect(posts('CGLOBEX')).toHaveLength(2);
});
