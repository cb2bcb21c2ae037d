import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWorkflowsFile } from '../../src/config/workflows-file.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import { ACTION } from '../../src/slack/blocks/ids.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { T0 } from '../helpers/factories.js';
import { eventually, startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';
import { addEvent, insertAlert } from '../helpers/slack-outbox.js';

/**
 * A channel belongs to one tenant. When the file gives tenant A's channel to
 * tenant B (A moving to another), A's alert threads already in that channel
 * stay there, but B's members can do nothing with them, and A's alert goes on
 * in A's new channel: nothing more of it is posted where B's people read.
 */

let t: TestDatabase;
let rig: SlackRig;

const file = (acmeChannel: string, globexChannel: string) =>
  parseWorkflowsFile(
    JSON.stringify({
      tenants: [
        { id: 'acme', name: 'Acme', channel: acmeChannel },
        { id: 'globex', name: 'Globex', channel: globexChannel },
      ],
      workflows: [
        { tenant: 'acme', name: 'acme-nightly', cron: '0 2 * * *' },
        { tenant: 'globex', name: 'globex-import', cron: '0 * * * *' },
      ],
    }),
  );

beforeAll(async () => {
  t = await createTestDatabase();
  rig = await startSlackRig(t.db);
});
afterAll(async () => {
  await rig.close();
  await t.drop();
});

describe("a channel given from one tenant to another", () => {
  it("the new tenant's members cannot act on the old tenant's alert in it, and the alert goes on in its tenant's new channel", async () => {
    await syncWorkflowsFile(t.db, file('CONE', 'CTWO'), T0, {}, rig.deps.config);
    const wf = await t.db.selectFrom('workflows').select('id').where('name', '=', 'acme-nightly').executeTakeFirstOrThrow();
    const alert = await insertAlert(t.db, wf.id);
    await addEvent(t.db, alert.id, 'opened', { now: T0, platformChannel: 'CPLAT' });
    await rig.drain();
    const [root] = rig.slack.roots('CONE');
    expect(root).toBeDefined();
    const rootText = root!.text;

    // Acme moves to CNEW; Globex takes CONE.
    await syncWorkflowsFile(t.db, file('CNEW', 'CONE'), T0, {}, rig.deps.config);

    await rig.click({ actionId: ACTION.takeOwnership, value: String(alert.id), channel: 'CONE', user: 'U0GLOBEX', messageTs: root!.ts });
    const refused = await eventually(() => {
      const r = rig.slack.responses.at(-1);
      if (!r) throw new Error('no answer yet');
      return r;
    });
    expect(refused.body).toMatchObject({ response_type: 'ephemeral', text: expect.stringContaining("can't find that alert") });
    expect(await t.db.selectFrom('alerts').select(['ownerUser', 'status']).where('id', '=', alert.id).executeTakeFirstOrThrow()).toEqual({ ownerUser: null, status: 'open' });

    await rig.command('status', { channel: 'CONE', user: 'U0GLOBEX' });
    const status = await eventually(() => {
      const r = rig.slack.responses.at(-1);
      if (!r || r === refused) throw new Error('no status yet');
      return r;
    });
    expect(JSON.stringify(status.body)).toContain('globex-import');
    expect(JSON.stringify(status.body)).not.toContain('acme-nightly');

    // The alert's next event is told in Acme's new channel (a root there), never in the channel Globex holds now.
    const before = rig.slack.messages('CONE').length;
    await addEvent(t.db, alert.id, 'escalated', { now: T0, platformChannel: 'CPLAT', changes: { severity: 'critical' } });
    await rig.drain();
    expect(rig.slack.roots('CNEW')).toHaveLength(1);
    expect(rig.slack.messages('CONE')).toHaveLength(before);
    // Nor is its old root there re-rendered with the alert's new state.
    expect(rig.slack.roots('CONE')[0]!.text).toBe(rootText);
    expect(rig.slack.roots('CNEW')[0]!.text).toMatch(/critical/i);
  });
});
