import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { finishRun } from '../../src/ledger/runs.js';
import { ACTION } from '../../src/slack/blocks/ids.js';
import type { TestDatabase } from '../helpers/db.js';
import { useManagedSlackRig } from '../helpers/managed-slack-rig.js';
import { T0 } from '../helpers/factories.js';
import { eventually, type SlackRig } from '../helpers/slack-bolt.js';
import { addEvent, insertAlert } from '../helpers/slack-outbox.js';

/**
 * DESIGN.md, people: every click answers in the message clicked, at once.
 * Run now used to answer nothing when it started a run: the clicker saw the
 * root unchanged until the paced outbox posted "@x started run #N" (seconds
 * in a busy channel). Now the root clicked is replaced at once by the root
 * rendered from the new state, which shows the run under way and who started
 * it; once the run ends, the root no longer shows it.
 */

const s = useManagedSlackRig();
let t: TestDatabase;
let rig: SlackRig;
let wf: Workflow;
const launched = s.launched;
beforeAll(() => void ({ t, wf } = s));
beforeEach(() => void ({ rig } = s));

const blocksText = (m: { blocks?: unknown }) => JSON.stringify(m.blocks ?? []);

describe('Run now answers in the root clicked', () => {
  it('replaces the root at once with the run under way and who started it; the root drops it once the run ends', async () => {
    const alert = await insertAlert(t.db, wf.id);
    await addEvent(t.db, alert.id, 'opened', { now: T0, platformChannel: 'CPLAT' });
    await rig.drain();
    const [root] = rig.slack.roots('CACME');

    await rig.click({ actionId: ACTION.runNow, value: String(alert.id), channel: 'CACME', user: 'U0CAROL', messageTs: root!.ts });
    const answer = await eventually(() => rig.slack.responses[0] ?? Promise.reject(new Error('not answered yet')));
    const run = await t.db.selectFrom('runs').selectAll().where('trigger', '=', 'manual').executeTakeFirstOrThrow();
    expect(answer.body).toMatchObject({ replace_original: true });
    expect(blocksText(answer.body)).toContain(`Run #${run.id} running, started by <@U0CAROL>`);
    await eventually(() => expect(launched).toContain(run.id));

    rig.clock.advance(60_000);
    await finishRun(rig.deps, run.id, { status: 'failed', error: 'still broken' });
    await pollFinishedRuns(rig.deps);
    await rig.drain();
    const updates = rig.slack.callsTo('chat.update').filter((c) => c.args.channel === 'CACME' && c.args.ts === root!.ts);
    expect(updates.length).toBeGreaterThan(0);
    expect(blocksText(updates.at(-1)!.args)).not.toContain('running, started by');
    expect(rig.slack.replies('CACME', root!.ts).map((m) => m.text)).toEqual([
      expect.stringContaining(`<@U0CAROL> started run #${run.id}.`),
      expect.stringContaining(`Run #${run.id} failed.`),
    ]);
  });
});
