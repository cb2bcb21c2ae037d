import { afterEach, describe, expect, it } from 'vitest';
import { replayScenario } from '../../src/replay/replay-scenario.js';
import { checkScenario, ScenarioError } from '../../src/replay/scenario.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * A scenario's `policyChanges`: the operator changed a workflow's overrides
 * at a moment of the period, and the replay changes them then, through the
 * same policy-version service the API and the file use (a version, and a
 * `policy_changed` reply in an open alert's thread). `replay --from-db`
 * writes them from the ledger's policy versions, so a baseline follows what
 * was really in force.
 */

let t: TestDatabase | undefined;
afterEach(async () => {
  await t?.drop();
  t = undefined;
});

const base = {
  start: '2026-03-10T00:00:00Z',
  until: '2026-03-10T06:00:00Z',
  tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }],
  // Fails every hour; resolves never: only alertAfter decides when the alert opens.
  workflows: [{ tenant: 'acme', name: 'hourly', cron: '0 * * * *', policy: { alertAfter: 5, retries: 0 } }],
  outcomes: [{ workflow: 'hourly', attempts: [{ status: 'failed', error: 'disk full' }] }],
};

async function openedAt(input: object): Promise<{ opened: string | undefined; versions: number[]; records: string[] }> {
  t = await createTestDatabase();
  const result = await replayScenario(checkScenario(input), { db: t.db });
  const alert = await t.db.selectFrom('alerts').select(['openedAt', 'policyVersion']).executeTakeFirst();
  const versions = await t.db.selectFrom('policyVersions').select('version').orderBy('version').execute();
  const records = result.actions.map((a) => `${a.at.toISOString()} ${a.action} ${a.workflow} ${a.result}`);
  await t.drop();
  t = undefined;
  return { opened: alert?.openedAt.toISOString(), versions: versions.map((v) => v.version), records };
}

describe('replay: policy changes during the period', { timeout: 120_000 }, () => {
  it('a change takes effect at its moment: failures before it counted under the old rules, the alert opens under the new', async () => {
    const without = await openedAt(base);
    // alertAfter 5: the 5th failed tick (04:00, its run failing a minute later) opens it.
    expect(without.opened).toBe('2026-03-10T04:01:00.000Z');
    expect(without.versions).toEqual([1]);

    const changed = await openedAt({ ...base, policyChanges: [{ at: '2026-03-10T01:30:00Z', workflow: 'hourly', policy: { alertAfter: 3, retries: 0 } }] });
    // From 01:30 alertAfter 3: the failures of 00:00 and 01:00 count from history, so 02:00's opens it.
    expect(changed.opened).toBe('2026-03-10T02:01:00.000Z');
    expect(changed.versions).toEqual([1, 2]);
    expect(changed.records).toEqual(['2026-03-10T01:30:00.000Z change_policy acme/hourly version 2: {"retries":0,"alertAfter":3}']);
  });

  it('a change after the alert opened is told in its thread as a policy change', async () => {
    t = await createTestDatabase();
    const result = await replayScenario(
      checkScenario({ ...base, workflows: [{ ...base.workflows[0]!, policy: { alertAfter: 1, retries: 0 } }], policyChanges: [{ at: '2026-03-10T02:30:00Z', workflow: 'acme/hourly', policy: { alertAfter: 1, retries: 0, escalationMultiplier: 20 } }] }),
      { db: t.db },
    );
    const events = await t.db.selectFrom('alertEvents').select(['kind', 'at']).orderBy('id').execute();
    expect(events.filter((e) => e.kind === 'policy_changed').map((e) => e.at.toISOString())).toEqual(['2026-03-10T02:30:00.000Z']);
    expect(result.actions.map((a) => a.action)).toEqual(['change_policy']);
  });

  it('a change of catch-up or overlap is a version the open alert does not hear of; one of its reminders it does', async () => {
    t = await createTestDatabase();
    const policy = { alertAfter: 1, retries: 0 };
    const result = await replayScenario(
      checkScenario({
        ...base,
        workflows: [{ ...base.workflows[0]!, policy }],
        policyChanges: [
          { at: '2026-03-10T02:30:00Z', workflow: 'hourly', policy: { ...policy, catchUpSeconds: 600, overlap: 'skip' } },
          { at: '2026-03-10T03:30:00Z', workflow: 'hourly', policy: { ...policy, catchUpSeconds: 600, overlap: 'skip', remindAfterSeconds: 900 } },
        ],
      }),
      { db: t.db },
    );
    expect(result.actions.map((a) => a.result)).toEqual([expect.stringMatching(/^version 2: /), expect.stringMatching(/^version 3: /)]);
    const versions = await t.db.selectFrom('policyVersions').select(['version', 'policy']).orderBy('version').execute();
    expect(versions.map((v) => v.version)).toEqual([1, 2, 3]);
    expect(versions[1]!.policy).toMatchObject({ catchUpSeconds: 600, overlap: 'skip', remindAfterSeconds: null });
    const events = await t.db.selectFrom('alertEvents').select(['kind', 'at', 'data']).where('kind', '=', 'policy_changed').orderBy('id').execute();
    expect(events.map((e) => [e.at.toISOString(), e.data])).toEqual([['2026-03-10T03:30:00.000Z', expect.objectContaining({ from: 2, to: 3, changes: [{ field: 'remindAfterSeconds', from: null, to: 900 }] })]]);
  });

  it('a change outside the period, of an unknown workflow, or with a bad policy field is refused, naming it', () => {
    const problems = (input: object) => {
      try {
        checkScenario(input, 'night.json');
        return [];
      } catch (error) {
        return (error as ScenarioError).problems;
      }
    };
    expect(problems({ ...base, policyChanges: [{ at: '2026-03-11T00:00:00Z', workflow: 'hourly', policy: {} }] })).toEqual([expect.stringContaining('policyChanges[0].at: must be between start and until')]);
    expect(problems({ ...base, policyChanges: [{ at: '2026-03-10T01:00:00Z', workflow: 'nightly', policy: {} }] })).toEqual([expect.stringContaining('policyChanges[0].workflow: no workflow "nightly"')]);
    expect(problems({ ...base, policyChanges: [{ at: '2026-03-10T01:00:00Z', workflow: 'hourly', policy: { alertAfter: 0 } }] })).toEqual([expect.stringContaining('policyChanges[0].policy.alertAfter')]);
  });
});
