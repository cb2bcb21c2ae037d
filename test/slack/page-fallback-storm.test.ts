import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, PLATFORM, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';
import { startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';

/**
 * A storm's page falls back like any page (docs/alerts.md, "A page that
 * reaches nobody"): critical alerts opening at once, their on-call group
 * empty, page the platform's on-call in the platform channel's storm thread.
 */
const TICK = new Date('2026-03-10T03:00:00Z');
const at = (m: number) => new Date(TICK.getTime() + minutes(m));

let t: TestDatabase;
let engine: Engine;
let rig: SlackRig;

beforeAll(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, at(1));
  rig = await startSlackRig(t.db, { clock: engine.clock, env: { PLATFORM_CHANNEL: PLATFORM, PLATFORM_ONCALL: 'SOPS' } });
  rig.slack.groupMembers.set('SOPS', ['U0OPS']);
  rig.slack.groupMembers.set('SKILO', []);
  await makeTenant(t.db, { id: 'kilo', name: 'Kilo', channel: 'CKILO', oncall: JSON.stringify({ group: 'SKILO' }) });
  for (let i = 0; i < 6; i++) {
    const wf = await makeWorkflow(t.db, { tenantId: 'kilo', name: `load-${i}`, cron: '0 * * * *', policy: JSON.stringify({ alertAfter: 1, retries: 0, firstSeverity: 'critical' }) });
    await reportRun(t.db, wf, TICK, { status: 'failed', error: 'warehouse unreachable' }, at(1));
  }
  await engine.drain();
  await rig.drain();
});
afterAll(async () => {
  await rig.close();
  await t.drop();
});

/** The broadcast replies under the channel's one storm message. */
function stormPages(channel: string): string[] {
  const roots = rig.slack.roots(channel);
  expect(roots).toHaveLength(1);
  return rig.slack
    .callsTo('chat.postMessage')
    .filter((c) => c.args.channel === channel && c.args.thread_ts === roots[0]!.ts && String(c.args.reply_broadcast) === 'true')
    .map((c) => `${String(c.args.text)}\n${JSON.stringify(c.args.blocks)}`);
}

describe("a storm's page whose on-call group is empty", () => {
  it("pages the platform's on-call in the platform channel's storm thread; the tenant's thread says only that it was", () => {
    const tenant = stormPages('CKILO');
    expect(tenant.length).toBeGreaterThan(0);
    for (const page of tenant) {
      expect(page).toContain("<!subteam^SKILO> has no members: the platform's on-call was paged.");
      expect(page).not.toContain('SOPS');
    }
    const platform = stormPages(PLATFORM);
    expect(platform.length).toBeGreaterThan(0);
    for (const page of platform) expect(page).toContain('Paging <!subteam^SOPS>.');
  });
});
