import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Launcher } from '../../src/launcher.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { eventually, startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';

/**
 * DESIGN.md, where runs come from: retries and Run now use the workflow's
 * launcher when it has one, and say plainly when it has none. A daily job's
 * policy gives 3 retries a tick, but an observed one (run by an outside
 * scheduler) gets none: `/scheduler status` used to say "0 retries per tick",
 * which reads as a policy someone set, not as "the bot cannot re-run it".
 */

let t: TestDatabase;
let rig: SlackRig;
const launcher: Launcher = { kind: 'test', launch: async () => ({ started: true }) };

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  await makeWorkflow(t.db, { tenantId: 'acme', name: 'outside-nightly', cron: '0 2 * * *' });
  await makeWorkflow(t.db, { tenantId: 'acme', name: 'managed-nightly', cron: '0 2 * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true' }) });
  rig = await startSlackRig(t.db, { launchers: (w) => (w.launcher ? launcher : undefined) });
});
afterAll(async () => {
  await rig.close();
  await t.drop();
});

async function policyLineOf(workflow: string, i: number): Promise<string> {
  await rig.command(`status ${workflow}`, { channel: 'CACME' });
  const answer = await eventually(() => rig.slack.responses[i] ?? Promise.reject(new Error('not answered yet')));
  return JSON.stringify(answer.body.blocks).match(/Policy: [^"\\]*/)![0];
}

describe('/scheduler status <workflow>: retries of a workflow without a launcher', () => {
  it('says plainly that an observed workflow is not retried, and why; a managed one shows its retries', async () => {
    expect(await policyLineOf('outside-nightly', 0)).toBe(
      'Policy: no retries (it has no launcher: the outside scheduler that runs it retries it, or not), alert after 1 confirmed failure, opens as critical',
    );
    expect(await policyLineOf('managed-nightly', 1)).toBe('Policy: 3 retries per tick, alert after 1 confirmed failure, opens as critical');
  });
});
