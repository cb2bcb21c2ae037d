import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Launcher } from '../../src/launcher.js';
import type { Workflow } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { eventually, startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';
import { addEvent, insertAlert } from '../helpers/slack-outbox.js';

/**
 * DESIGN.md: `/scheduler` answers are ephemeral unless they change state for
 * everyone. A change an open alert's thread tells (pause, resume, run now on
 * a workflow with an open alert) answers only the asker; one that no thread
 * would tell (a maintenance window, a pause or a run with no alert open)
 * is answered in the channel, naming who did it, so the rest of the channel
 * is not left to find out from a workflow that went quiet.
 */

let t: TestDatabase;
let rig: SlackRig;
let wf: Workflow;
const launched: number[] = [];
const launcher: Launcher = { kind: 'test', launch: async (ctx) => (launched.push(ctx.runId), { started: true }) };

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true' }) });
});
afterAll(() => t.drop());

beforeEach(async () => {
  rig = await startSlackRig(t.db, { launchers: (w) => (w.launcher ? launcher : undefined) });
});
afterEach(async () => {
  await rig.close();
  await t.db.deleteFrom('notifications').execute();
  await t.db.deleteFrom('alertThreads').execute();
  await t.db.deleteFrom('alertEvents').execute();
  await t.db.deleteFrom('alerts').execute();
  await t.db.deleteFrom('runs').execute();
  await t.db.deleteFrom('maintenanceWindows').execute();
  await t.db.updateTable('workflows').set({ paused: false, pausedAt: null, pausedBy: null, pauseReason: null }).execute();
});

/** The answer to the n-th command sent in this test (0-based), once it has arrived. */
const answer = (i: number) =>
  eventually(() => {
    const r = rig.slack.responses[i];
    if (!r) throw new Error(`no response #${i} yet`);
    return r.body as { response_type?: string; text: string };
  });

async function openAlert() {
  const alert = await insertAlert(t.db, wf.id);
  await addEvent(t.db, alert.id, 'opened', { now: T0, platformChannel: 'CPLAT' });
  await rig.drain();
  return alert;
}

describe('a state change no thread tells is answered in the channel', () => {
  it('a maintenance window (never told in a thread when it starts) is answered in the channel, naming who set it', async () => {
    await rig.command('maintenance nightly-pipeline 2h db upgrade <!channel>', { channel: 'CACME', user: 'U0OPS' });
    const reply = await answer(0);
    expect(reply.response_type).toBe('in_channel');
    expect(reply.text).toMatch(/^<@U0OPS> set maintenance for \*nightly-pipeline\* until <!date\^/);
    expect(reply.text).toContain('(db upgrade &lt;!channel&gt;)');
    expect(reply.text).not.toContain('<!channel>');
  });

  it('pause and resume with no alert open are answered in the channel, naming who and why', async () => {
    await rig.command('pause nightly-pipeline vendor outage', { channel: 'CACME', user: 'U0OPS' });
    const paused = await answer(0);
    expect(paused.response_type).toBe('in_channel');
    expect(paused.text).toMatch(/^<@U0OPS> paused \*nightly-pipeline\* \(vendor outage\): nothing fires/);
    await rig.command('resume nightly-pipeline', { channel: 'CACME', user: 'U0OPS' });
    const resumed = await answer(1);
    expect(resumed.response_type).toBe('in_channel');
    expect(resumed.text).toMatch(/^<@U0OPS> resumed \*nightly-pipeline\*: it fires from its next tick/);
  });

  it("pause with an alert open answers only the asker: the alert's thread tells the channel", async () => {
    await openAlert();
    await rig.command('pause nightly-pipeline', { channel: 'CACME', user: 'U0OPS' });
    const paused = await answer(0);
    expect(paused.response_type).toBe('ephemeral');
    expect(paused.text).toContain("Its open alert's thread has been told.");
  });

  it('a refusal or a change that changed nothing stays private', async () => {
    await rig.command('resume nightly-pipeline', { channel: 'CACME', user: 'U0OPS' });
    expect(await answer(0)).toMatchObject({ response_type: 'ephemeral', text: '*nightly-pipeline* is not paused.' });
  });

  it("run now with no alert open is answered in the channel; with one open, privately (the thread says who started it)", async () => {
    await rig.command('run nightly-pipeline', { channel: 'CACME', user: 'U0OPS' });
    const started = await answer(0);
    const run = await t.db.selectFrom('runs').selectAll().where('trigger', '=', 'manual').executeTakeFirstOrThrow();
    expect(started.response_type).toBe('in_channel');
    expect(started.text).toMatch(new RegExp(`^<@U0OPS> started run #${run.id} of \\*nightly-pipeline\\*\\.`));
    await eventually(() => expect(launched).toContain(run.id));
    await t.db.updateTable('runs').set({ status: 'succeeded', finishedAt: rig.clock.now(), processedAt: rig.clock.now() }).where('id', '=', run.id).execute();

    await openAlert();
    await rig.command('run nightly-pipeline', { channel: 'CACME', user: 'U0OPS' });
    const second = await answer(1);
    expect(second.response_type).toBe('ephemeral');
    expect(second.text).toContain('The open alert shows who started it and how it ends.');
  });
});
