import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyCandidate } from '../../src/replay/candidate-policy.js';
import { scenarioFromLedger } from '../../src/replay/from-ledger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeRun, makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * `replay --from-db` replays the baseline under the policy in force at
 * `--since` (the version recorded then), not the workflow's overrides of
 * today: the question is what a candidate would have changed about what
 * really happened. (The week-long replay itself is from-ledger.slow.test.ts.)
 */

const SINCE = new Date('2026-03-02T00:00:00Z');
const UNTIL = new Date('2026-03-09T00:00:00Z');
let t: TestDatabase;

/** A version row as recordPolicyVersions stores it: the effective policy with the overrides beside it. */
async function version(workflowId: number, n: number, changedAt: string, overrides: Record<string, unknown>) {
  await t.db
    .insertInto('policyVersions')
    .values({ workflowId, version: n, policy: JSON.stringify({ alertAfter: 2, retries: 2, ...overrides, overrides }), changedBy: 'api (acme)', changedAt: new Date(changedAt) })
    .execute();
  await t.db.updateTable('workflows').set({ policyVersion: n }).where('id', '=', workflowId).execute();
}

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  // Tuned mid-week: alertAfter 2 until Thursday noon, 6 from then, 9 since the week after (today's overrides).
  const tuned = await makeWorkflow(t.db, { name: 'tuned', cron: '0 * * * *', policy: { alertAfter: 9 } });
  await version(tuned.id, 1, '2026-02-01T00:00:00Z', { alertAfter: 2 });
  await version(tuned.id, 2, '2026-03-05T12:00:00Z', { alertAfter: 6 });
  await version(tuned.id, 3, '2026-03-12T00:00:00Z', { alertAfter: 9 });
  // No version recorded (a ledger from before versions): today's overrides are all there is.
  await makeWorkflow(t.db, { name: 'unversioned', cron: '0 * * * *', policy: { retries: 1 } });
  await makeRun(t.db, { workflowId: tuned.id, tick: new Date('2026-03-03T10:00:00Z'), status: 'failed', processedAt: new Date('2026-03-03T10:01:00Z') });
});
afterAll(async () => {
  await t.drop();
});

describe('replay --from-db baseline', () => {
  it('replays each workflow under the overrides of the version in force at --since, and names a change inside the period', async () => {
    const { scenario, policies, notes } = await scenarioFromLedger(t.db, { tenant: 'acme', since: SINCE, until: UNTIL });
    expect(policies).toEqual({ tuned: { alertAfter: 2 }, unversioned: { retries: 1 } });
    expect(scenario.workflows.map((w) => [w.name, w.policy])).toEqual([
      ['tuned', { alertAfter: 2 }],
      ['unversioned', { retries: 1 }],
    ]);
    expect(notes).toContainEqual(expect.stringMatching(/^tuned: its policy changed during the period \(v2 at 2026-03-05T12:00:00\.000Z\); the baseline starts under v1 and follows each change/));
    expect(notes.filter((n) => n.includes('unversioned') && n.includes('policy'))).toEqual([]);
    // The change inside the period is replayed when it was made; v3 (after the period) is not.
    expect(scenario.policyChanges).toEqual([{ at: '2026-03-05T12:00:00.000Z', workflow: 'tuned', policy: { alertAfter: 6 } }]);
    // A candidate is laid over the baseline's overrides, not today's, and over the change too: its fields hold throughout.
    const candidate = applyCandidate(scenario, { default: { retries: 0 } });
    expect(candidate.workflows.find((w) => w.name === 'tuned')?.policy).toEqual({ alertAfter: 2, retries: 0 });
    expect(candidate.policyChanges).toEqual([{ at: '2026-03-05T12:00:00.000Z', workflow: 'tuned', policy: { alertAfter: 6, retries: 0 } }]);
    expect(applyCandidate(scenario, { default: { alertAfter: 3 } }).policyChanges?.[0]?.policy).toEqual({ alertAfter: 3 });
  });

  it('a version that changed only the derived defaults (a new release) is not replayed as a change', async () => {
    const steady = await makeWorkflow(t.db, { name: 'steady', cron: '0 * * * *', policy: { retries: 1 } });
    await version(steady.id, 1, '2026-02-01T00:00:00Z', { retries: 1 });
    await version(steady.id, 2, '2026-03-04T00:00:00Z', { retries: 1 });
    const { scenario, notes } = await scenarioFromLedger(t.db, { tenant: 'acme', workflow: 'steady', since: SINCE, until: UNTIL });
    expect(scenario.policyChanges).toBeUndefined();
    expect(notes.filter((n) => n.startsWith('steady'))).toEqual([]);
  });

  it('a workflow disabled since (removed from the file, renamed, deleted) is replayed from its runs in the period; one without any there is not', async () => {
    const gone = await makeWorkflow(t.db, { name: 'gone', cron: '0 * * * *', enabled: false });
    await makeWorkflow(t.db, { name: 'long-gone', cron: '0 * * * *', enabled: false });
    await makeRun(t.db, { workflowId: gone.id, tick: new Date('2026-03-04T10:00:00Z'), startedAt: new Date('2026-03-04T10:00:00Z'), status: 'failed', processedAt: new Date('2026-03-04T10:01:00Z') });
    const { scenario, notes } = await scenarioFromLedger(t.db, { tenant: 'acme', since: SINCE, until: UNTIL });
    expect(scenario.workflows.map((w) => w.name)).toContain('gone');
    expect(scenario.workflows.map((w) => w.name)).not.toContain('long-gone');
    expect(notes).toContainEqual(expect.stringMatching(/^gone is disabled now/));
    const alone = await scenarioFromLedger(t.db, { tenant: 'acme', workflow: 'gone', since: SINCE, until: UNTIL });
    expect(alone.scenario.workflows.map((w) => w.name)).toEqual(['gone']);
    await t.db.deleteFrom('runs').where('workflowId', '=', gone.id).execute();
    await t.db.deleteFrom('workflows').where('name', 'in', ['gone', 'long-gone']).execute();
  });

  it('a period that starts after a change replays that version', async () => {
    const { policies, notes } = await scenarioFromLedger(t.db, { tenant: 'acme', workflow: 'tuned', since: new Date('2026-03-06T00:00:00Z'), until: new Date('2026-03-11T00:00:00Z') });
    expect(policies).toEqual({ tuned: { alertAfter: 6 } });
    expect(notes.filter((n) => n.startsWith('tuned'))).toEqual([]);
  });
});
