import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { runEscalationClock } from '../../src/engine/escalation.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes, T0 } from '../helpers/factories.js';
import { eventually, startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';

let t: TestDatabase;
let rig: SlackRig;
let engine: Engine;
let wf: Workflow;
let tickAt: Date;

beforeEach(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
  wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'quality-check', cron: '*/5 * * * *' });
  rig = await startSlackRig(t.db);
  engine = createEngine(t.db, T0, { PLATFORM_CHANNEL: 'CPLAT' }, 'engine-a', rig.clock);
  tickAt = T0;
});
afterEach(async () => {
  await rig.close();
  await t.drop();
});

/** The next five-minute tick fails, reported a minute later; the engine steps and the outbox drains. */
async function failNext(count = 1) {
  for (let i = 0; i < count; i++) {
    tickAt = new Date(tickAt.getTime() + minutes(5));
    if (rig.clock.now() < new Date(tickAt.getTime() + minutes(1))) rig.clock.set(new Date(tickAt.getTime() + minutes(1)));
    await reportRun(t.db, wf, tickAt, { status: 'failed', error: 'check failed: 17 rows missing' }, rig.clock.now());
    await engine.step();
    await rig.drain();
  }
}

/** The n-th answer on the response_url (0-based), once it has arrived. */
const answer = (i: number) =>
  eventually(() => {
    const r = rig.slack.responses[i];
    if (!r) throw new Error(`no response #${i} yet`);
    return r.body as { response_type?: string; text: string };
  });

const thread = () => {
  const [root] = rig.slack.roots('CACME');
  return root ? rig.slack.replies('CACME', root.ts) : [];
};

describe('/scheduler maintenance', () => {
  it('holds failing ticks (nothing counted, nothing posted) and its end is told once in the thread, across two replicas', async () => {
    await failNext(3);
    expect(rig.slack.roots('CACME')).toHaveLength(1);
    const repliesBefore = thread().length;

    await rig.command('maintenance quality-check 30m warehouse migration', { channel: 'CACME', user: 'U0OPS' });
    const reply = await answer(0);
    // No thread is told when a window starts: the channel is (state-change-answers.test.ts).
    expect(reply.response_type).toBe('in_channel');
    expect(reply.text).toContain('<@U0OPS> set maintenance for *quality-check* until');
    const [window] = await t.db.selectFrom('maintenanceWindows').selectAll().execute();
    expect(window).toMatchObject({ tenantId: 'acme', workflowId: wf.id, reason: 'warehouse migration', createdBy: 'U0OPS' });
    expect(window!.endsAt.getTime() - window!.startsAt.getTime()).toBe(minutes(30));

    // Every tick that is reported (a minute after it) before the window ends.
    const ticksInside = Math.floor((window!.endsAt.getTime() - tickAt.getTime() - minutes(1) - 1) / minutes(5));
    expect(ticksInside).toBeGreaterThanOrEqual(4);
    await failNext(ticksInside);
    expect(thread().slice(repliesBefore).map((m) => m.text)).toEqual([]);
    expect(rig.slack.roots('CACME')).toHaveLength(1);
    const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
    expect(alert).toMatchObject({ consecutiveFailures: 3, severity: 'warning' });

    rig.clock.set(window!.endsAt);
    const other = createEngine(t.db, T0, { PLATFORM_CHANNEL: 'CPLAT' }, 'engine-b', rig.clock);
    await Promise.all([runEscalationClock(engine.deps), runEscalationClock(other.deps)]);
    await runEscalationClock(other.deps);
    await rig.drain();
    const after = thread().slice(repliesBefore);
    expect(after).toHaveLength(1);
    expect(after[0]!.text).toMatch(/^Acme \/ quality-check: Maintenance ended after 30m \(warehouse migration\)\. During it, [4-9] failures were not held against the workflow\./);
  });

  it('a tenant-wide window that ends with no alert open is told once in the tenant channel', async () => {
    await rig.command('maintenance acme 20m patching', { channel: 'CACME', user: 'U0OPS' });
    expect((await answer(0)).text).toContain('every workflow of *acme*');
    const [window] = await t.db.selectFrom('maintenanceWindows').selectAll().execute();
    await failNext(3); // 02:05 … 02:15, inside [02:00, 02:20)
    expect(await t.db.selectFrom('alerts').selectAll().execute()).toEqual([]);
    expect(rig.slack.roots('CACME')).toEqual([]);

    rig.clock.set(window!.endsAt);
    const other = createEngine(t.db, T0, { PLATFORM_CHANNEL: 'CPLAT' }, 'engine-b', rig.clock);
    await Promise.all([runEscalationClock(engine.deps), runEscalationClock(other.deps)]);
    await rig.drain();
    await rig.drain();
    expect(rig.slack.roots('CACME').map((m) => m.text)).toEqual([expect.stringMatching(/^Maintenance of \*acme\* ended .*\(patching\): 3 failed and 0 missed runs inside it, not counted\.$/)]);
  });

  it("a tenant in shadow: the end of its tenant-wide window is told on the platform channel, marked Shadow, not in the tenant's", async () => {
    await rig.close();
    rig = await startSlackRig(t.db, { env: { PLATFORM_CHANNEL: 'CPLAT' }, clock: engine.clock });
    await t.db.updateTable('tenants').set({ shadow: true }).where('id', '=', 'acme').execute();
    await rig.command('maintenance acme 20m patching', { channel: 'CACME', user: 'U0OPS' });
    expect((await answer(0)).text).toContain('every workflow of *acme*');
    const [window] = await t.db.selectFrom('maintenanceWindows').selectAll().execute();
    await failNext(3);
    rig.clock.set(window!.endsAt);
    await runEscalationClock(engine.deps);
    await rig.drain();
    await eventually(() => expect(rig.slack.roots('CPLAT').map((m) => m.text)).toEqual([expect.stringMatching(/^Shadow · Maintenance of \*acme\* ended .*: 3 failed and 0 missed runs inside it, not counted\.$/)]));
    expect(rig.slack.roots('CACME')).toEqual([]);
  });

  it('a tenant-wide window by the tenant id; another tenant\'s channel cannot reach it; a reason is required', async () => {
    await rig.command('maintenance acme 2h patching', { channel: 'CACME' });
    expect((await answer(0)).text).toContain('every workflow of *acme*');
    await rig.command('maintenance acme 2h patching', { channel: 'CGLOBEX' });
    expect((await answer(1)).text).toContain('No workflow called `acme` in Globex');
    await rig.command('maintenance quality-check 2h', { channel: 'CACME' });
    expect((await answer(2)).text).toContain('needs a reason');
    await rig.command('maintenance quality-check soon fix', { channel: 'CACME' });
    expect((await answer(3)).text).toContain('"soon" is not a duration');
    const windows = await t.db.selectFrom('maintenanceWindows').selectAll().execute();
    expect(windows).toEqual([expect.objectContaining({ tenantId: 'acme', workflowId: null, reason: 'patching' })]);
  });

  it('a tenant id that is also a workflow name is asked about, not guessed; acme/* and acme/acme say which', async () => {
    const same = await makeWorkflow(t.db, { tenantId: 'acme', name: 'acme', cron: '*/5 * * * *' });
    await rig.command('maintenance acme 2h patching', { channel: 'CACME', user: 'U0OPS' });
    expect((await answer(0)).text).toBe('`acme` is both a tenant and one of its workflows: say `acme/*` for every workflow of the tenant, or `acme/acme` for `acme` alone.');
    expect(await t.db.selectFrom('maintenanceWindows').selectAll().execute()).toEqual([]);

    await rig.command('maintenance acme/acme 2h patching', { channel: 'CACME', user: 'U0OPS' });
    expect((await answer(1)).text).toContain('set maintenance for *acme* until');
    await rig.command('maintenance acme/* 2h patching', { channel: 'CACME', user: 'U0OPS' });
    expect((await answer(2)).text).toContain('every workflow of *acme*');
    // Another tenant's channel cannot name acme's whole tenant, and is told nothing of it.
    await rig.command('maintenance acme/* 2h patching', { channel: 'CGLOBEX', user: 'U0OPS' });
    expect((await answer(3)).text).toBe('No tenant called `acme` here.');
    const windows = await t.db.selectFrom('maintenanceWindows').select(['tenantId', 'workflowId']).orderBy('id').execute();
    expect(windows).toEqual([{ tenantId: 'acme', workflowId: same.id }, { tenantId: 'acme', workflowId: null }]);
  });
});

describe('/scheduler pause and resume', () => {
  it('answer ephemerally, tell the open alert\'s thread, and stop then restart escalation', async () => {
    await failNext(3);
    const repliesBefore = thread().length;
    await rig.command('pause quality-check vendor outage', { channel: 'CACME', user: 'U0OPS' });
    const paused = await answer(0);
    expect(paused.response_type).toBe('ephemeral');
    expect(paused.text).toContain('Paused *quality-check*');
    expect(await t.db.selectFrom('workflows').select(['paused', 'pausedBy', 'pauseReason']).where('id', '=', wf.id).executeTakeFirstOrThrow()).toEqual({
      paused: true,
      pausedBy: 'U0OPS',
      pauseReason: 'vendor outage',
    });
    await rig.drain();
    expect(thread()).toHaveLength(repliesBefore + 1);

    await failNext(6); // past the deadline and 2 × alertAfter: still a warning
    expect((await t.db.selectFrom('alerts').select('severity').where('workflowId', '=', wf.id).executeTakeFirstOrThrow()).severity).toBe('warning');

    await rig.command('pause quality-check', { channel: 'CACME' });
    expect((await answer(1)).text).toContain('already paused');
    await rig.command('resume quality-check', { channel: 'CGLOBEX' });
    expect((await answer(2)).text).toContain('No workflow called `quality-check`');
    await rig.command('resume quality-check', { channel: 'CACME', user: 'U0OPS' });
    expect((await answer(3)).text).toContain('Resumed *quality-check*');
    await rig.drain();
    expect(rig.slack.roots('CACME')).toHaveLength(1);
    expect(thread().length).toBeGreaterThanOrEqual(repliesBefore + 2);
  });

  it('ADMIN_USERS limits pause, resume and maintenance', async () => {
    await rig.close();
    rig = await startSlackRig(t.db, { env: { ADMIN_USERS: 'U0ADMIN' }, clock: rig.clock });
    await rig.command('pause quality-check', { channel: 'CACME', user: 'U0ALICE' });
    expect((await answer(0)).text).toContain("Only Acme's admins can pause or resume this tenant's workflows. Ask <@U0ADMIN>.");
    await rig.command('maintenance acme 1h x', { channel: 'CACME', user: 'U0ALICE' });
    expect((await answer(1)).text).toContain("Only Acme's admins can set maintenance windows for this tenant's workflows. Ask <@U0ADMIN>.");
    expect((await t.db.selectFrom('workflows').select('paused').where('id', '=', wf.id).executeTakeFirstOrThrow()).paused).toBe(false);
    expect(await t.db.selectFrom('maintenanceWindows').selectAll().execute()).toEqual([]);
  });
});
