import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import type { TestDatabase } from '../helpers/db.js';
import { useManagedSlackRig } from '../helpers/managed-slack-rig.js';
import { T0 } from '../helpers/factories.js';
import { eventually, type SlackRig } from '../helpers/slack-bolt.js';
import { addEvent, insertAlert } from '../helpers/slack-outbox.js';

/**
 * DESIGN.md: `/scheduler` answers are ephemeral unless they change state for
 * everyone. A change an open alert's thread tells (pause, resume, run now on
 * a workflow with an open alert) answers only the asker; one that no thread
 * would tell (a maintenance window, a pause or a run with no alert open)
 * is answered in the channel, naming who did it, so the rest of the channel
 * is not left to find out from a workflow that went quiet.
 */

const s = useManagedSlackRig(async ({ db }) => {
  await db.deleteFrom('notifications').execute();
  await db.deleteFrom('alertThreads').execute();
  await db.deleteFrom('alertEvents').execute();
  await db.deleteFrom('alerts').execute();
  await db.deleteFrom('runs').execute();
  await db.deleteFrom('maintenanceWindows').execute();
  await db.updateTable('workflows').set({ paused: false, pausedAt: null, pausedBy: null, pauseReason: null }).execute();
});
let t: TestDatabase;
let rig: SlackRig;
let wf: Workflow;
const launched = s.launched;
beforeAll(() => void ({ t, wf } = s));
beforeEach(() => void ({ rig } = s));

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

describe('typed in the platform channel about a tenant’s workflow', () => {
  const toldIn = (channel: string, since: number) => rig.slack.callsTo('chat.postMessage').slice(since).filter((c) => c.channel === channel);

  it('the tenant’s channel (where its alerts go) is told; the typer is answered privately, naming where', async () => {
    const since = rig.slack.callsTo('chat.postMessage').length;
    await rig.command('pause acme/nightly-pipeline vendor outage', { channel: 'CPLAT', user: 'U0OPS' });
    const paused = await answer(0);
    expect(paused.response_type).toBe('ephemeral');
    expect(paused.text).toMatch(/^Told in <#CACME>: <@U0OPS> paused \*nightly-pipeline\* \(vendor outage\)/);
    const told = await eventually(() => toldIn('CACME', since)[0] ?? Promise.reject(new Error('not told yet')));
    expect(told.text).toMatch(/^<@U0OPS> paused \*nightly-pipeline\* \(vendor outage\): nothing fires/);

    await rig.command('maintenance acme/nightly-pipeline 2h db upgrade', { channel: 'CPLAT', user: 'U0OPS' });
    expect((await answer(1)).text).toMatch(/^Told in <#CACME>: <@U0OPS> set maintenance for \*nightly-pipeline\*/);
    await eventually(() => expect(toldIn('CACME', since).map((c) => String(c.text))).toEqual([expect.stringContaining('paused'), expect.stringContaining('set maintenance')]));
    expect(toldIn('CPLAT', since)).toEqual([]);
  });

  it('typed in the tenant’s own channel: said there, as before, and nothing posted elsewhere', async () => {
    const since = rig.slack.callsTo('chat.postMessage').length;
    await rig.command('pause nightly-pipeline', { channel: 'CACME', user: 'U0OPS' });
    expect((await answer(0)).response_type).toBe('in_channel');
    expect(rig.slack.callsTo('chat.postMessage').slice(since)).toEqual([]);
  });
});
