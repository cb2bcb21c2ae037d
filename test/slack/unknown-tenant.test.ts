import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { eventually, startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';

/**
 * DESIGN.md, `/scheduler`: unknown names get suggestions. A misspelt
 * workflow always did; a misspelt tenant (`digest <tenant>` and
 * `maintenance <tenant>/*` in the platform channel) got a bare "No tenant".
 * A tenant's own channel is never offered another tenant's id.
 */

let t: TestDatabase;
let rig: SlackRig;

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
  await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly-pipeline' });
  rig = await startSlackRig(t.db);
});
afterAll(async () => {
  await rig.close();
  await t.drop();
});

let sent = 0;
async function ask(text: string, channel: string): Promise<string> {
  const i = sent++;
  await rig.command(text, { channel, user: 'U0OPS' });
  const answer = await eventually(() => rig.slack.responses[i] ?? Promise.reject(new Error('not answered yet')));
  return (answer.body as { text: string }).text;
}

describe('a misspelt tenant is answered with the closest names', () => {
  it('digest <tenant> in the platform channel', async () => {
    expect(await ask('digest acmee', 'CPLAT')).toBe('No tenant `acmee`. Did you mean `acme`?');
  });

  it('maintenance <tenant>/* in the platform channel; nothing is set', async () => {
    expect(await ask('maintenance globx/* 2h patching', 'CPLAT')).toBe('No tenant called `globx` here. Did you mean `globex/*`?');
    expect(await t.db.selectFrom('maintenanceWindows').selectAll().execute()).toEqual([]);
  });

  it("a tenant's channel is never offered another tenant's id", async () => {
    expect(await ask('maintenance acmee/* 2h patching', 'CGLOBEX')).toBe('No tenant called `acmee` here.');
    expect(await ask('maintenance acmee/* 2h patching', 'CACME')).toBe('No tenant called `acmee` here. Did you mean `acme/*`?');
  });
});
