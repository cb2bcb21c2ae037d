import { afterAll, beforeAll } from 'vitest';
import { RESOLVE_FIELD, VIEW } from '../../src/slack/blocks/ids.js';
import type { Workflow } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { createEngine, PLATFORM, type Engine } from './engine-harness.js';
import { makeTenant, makeWorkflow } from './factories.js';
import { startSlackRig, type SlackRig } from './slack-bolt.js';

export interface PeopleRig {
  t: TestDatabase;
  engine: Engine;
  rig: SlackRig;
  /** A managed workflow of acme (a command launcher), named `job-<n>`, with `policy` as its overrides. */
  workflow(cron: string, policy?: Record<string, unknown>): Promise<Workflow>;
}

/**
 * The set-up the tests around people share: a fresh database, the real engine
 * and the signed-request Slack rig on one ManualClock starting at `start`,
 * the platform channel, and tenant acme (channel CACME, on-call group
 * SONCALL, admin U0LEAD); `env` adds to the configuration. Registers its own beforeAll/afterAll; the fields
 * are set once beforeAll has run.
 */
export function usePeopleRig(start: Date, command = './check', env: Record<string, string> = {}): PeopleRig {
  let seq = 0;
  const ctx = {
    workflow: (cron: string, policy: Record<string, unknown> = { retries: 0, recoverAfter: 1 }) =>
      makeWorkflow(ctx.t.db, { tenantId: 'acme', name: `job-${++seq}`, cron, mode: 'managed', launcher: JSON.stringify({ kind: 'command', command }), policy: JSON.stringify(policy) }),
  } as PeopleRig;
  beforeAll(async () => {
    ctx.t = await createTestDatabase();
    ctx.engine = createEngine(ctx.t.db, start);
    ctx.rig = await startSlackRig(ctx.t.db, { clock: ctx.engine.clock, launchers: ctx.engine.launcher.resolver, env: { PLATFORM_CHANNEL: PLATFORM, ...env } });
    await makeTenant(ctx.t.db, { id: 'acme', name: 'Acme', channel: 'CACME', oncall: JSON.stringify({ group: 'SONCALL' }), rights: JSON.stringify({ admins: ['U0LEAD'] }) });
  });
  afterAll(async () => {
    await ctx.rig.close();
    await ctx.t.drop();
  });
  return ctx;
}

/** The Resolve… modal submitted, signed as Slack sends it, with `note` in its field (`privateMetadata`: the modal's own). */
export function submitResolve(rig: SlackRig, privateMetadata: string, user: string, note: string | null) {
  return rig.interact({
    type: 'view_submission',
    team: { id: 'T0TEST' },
    user: { id: user },
    api_app_id: 'A0TEST',
    view: {
      id: 'V1',
      callback_id: VIEW.resolve,
      private_metadata: privateMetadata,
      state: { values: { [RESOLVE_FIELD.note.block]: { [RESOLVE_FIELD.note.action]: { type: 'plain_text_input', value: note } } } },
    },
  });
}
