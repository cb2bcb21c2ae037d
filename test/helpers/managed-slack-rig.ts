import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import type { Launcher } from '../../src/launcher.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { makeTenant, makeWorkflow } from './factories.js';
import { startSlackRig, type SlackRig } from './slack-bolt.js';

export interface ManagedSlackRig {
  t: TestDatabase;
  /** A fresh signed-request Slack rig for each test. */
  rig: SlackRig;
  /** acme's managed `nightly-pipeline` (02:00 daily). */
  wf: Workflow;
  /** The run ids the launcher was asked to start, in order: it starts nothing, so no child races a test. */
  launched: number[];
}

/**
 * One tenant (acme, #CACME) with one managed workflow whose launches are only
 * recorded, on a database of the file's own, and a Slack rig per test.
 * `cleanUp` runs after each test once its rig is closed.
 */
export function useManagedSlackRig(cleanUp?: (t: TestDatabase) => Promise<void>): ManagedSlackRig {
  const s = { launched: [] as number[] } as ManagedSlackRig;
  const launcher: Launcher = { kind: 'test', launch: async (ctx) => (s.launched.push(ctx.runId), { started: true }) };
  beforeAll(async () => {
    s.t = await createTestDatabase();
    await makeTenant(s.t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
    s.wf = await makeWorkflow(s.t.db, { tenantId: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true' }) });
  });
  afterAll(() => s.t.drop());
  beforeEach(async () => {
    s.rig = await startSlackRig(s.t.db, { launchers: (w) => (w.launcher ? launcher : undefined) });
  });
  afterEach(async () => {
    await s.rig.close();
    await cleanUp?.(s.t);
  });
  return s;
}
