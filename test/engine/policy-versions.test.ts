import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WorkflowsFile } from '../../src/config/workflows-file.js';
import type { PolicyOverrides, Workflow } from '../../src/db/schema.js';
import { DEFAULTS_RELEASE, recordPolicyVersions } from '../../src/services/policy-versions.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import { pauseWorkflow, resumeWorkflow } from '../../src/services/workflow-state.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, PLATFORM, reportRun, type Engine } from '../helpers/engine-harness.js';
import { minutes } from '../helpers/factories.js';

/** Issue 17: every effective policy change is a version; alerts and events carry the one they were decided under. */
const START = new Date('2026-03-10T00:00:00Z');
const HOUR = 3_600_000;
const ROUTING = { PLATFORM_CHANNEL: PLATFORM };

let t: TestDatabase;
let engine: Engine;

beforeEach(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, START);
});
afterEach(async () => t.drop());

function file(policy: PolicyOverrides = {}, extra: { shadow?: boolean } = {}): WorkflowsFile {
  return {
    tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME', ...(extra.shadow !== undefined ? { shadow: extra.shadow } : {}) }],
    workflows: [{ tenant: 'acme', name: 'hourly-export', cron: '0 * * * *', timezone: 'UTC', policy, monitoring: true, paused: false, enabled: true }],
  };
}

const sync = (policy: PolicyOverrides = {}, at = engine.clock.now()) => syncWorkflowsFile(t.db, file(policy), at, {}, ROUTING);
const workflow = () => t.db.selectFrom('workflows').selectAll().where('name', '=', 'hourly-export').executeTakeFirstOrThrow();
const versions = async () => t.db.selectFrom('policyVersions').selectAll().orderBy('version').execute();
const alerts = async () => t.db.selectFrom('alerts').selectAll().orderBy('id').execute();
const events = async (alertId: number) => t.db.selectFrom('alertEvents').select(['kind', 'data', 'policyVersion']).where('alertId', '=', alertId).orderBy('id').execute();

async function report(wf: Workflow, hour: number, status: 'succeeded' | 'failed') {
  const tick = new Date(START.getTime() + hour * HOUR);
  engine.clock.set(new Date(tick.getTime() + minutes(2)));
  await reportRun(t.db, wf, tick, status === 'failed' ? { status, error: 'export to s3 failed' } : { status }, engine.clock.now());
  await engine.drain();
}

describe('policy versions', () => {
  it('a version per effective change, none for an unchanged re-sync or an override equal to its default', async () => {
    await sync();
    expect((await versions()).map((v) => [v.version, v.changedBy])).toEqual([[1, 'workflows file']]);
    expect((await workflow()).policyVersion).toBe(1);

    await sync();
    await sync({ alertAfter: 2 }); // the hourly default: the effective policy is the same
    expect(await versions()).toHaveLength(1);
    expect(await recordPolicyVersions(t.db, { now: engine.clock.now(), config: ROUTING, changedBy: 'api' })).toBe(0);

    await sync({ alertAfter: 4 });
    const all = await versions();
    expect(all.map((v) => v.version)).toEqual([1, 2]);
    expect(all[1]).toMatchObject({ changedBy: 'workflows file', policy: expect.objectContaining({ alertAfter: 4, overrides: { alertAfter: 4 } }) });
    expect((await workflow()).policyVersion).toBe(2);
  });

  it('a restart on another date records nothing: the cadence of a schedule in a DST zone does not move with the date', async () => {
    // Twice a day in London (gaps of 8 h and 16 h), and monthly: restarts before and after the clocks change, and a month on.
    const twice: WorkflowsFile = {
      tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }],
      workflows: [
        { tenant: 'acme', name: 'twice-daily', cron: '0 9,17 * * *', timezone: 'Europe/London', monitoring: true, paused: false, enabled: true },
        { tenant: 'acme', name: 'monthly', cron: '0 0 1 * *', timezone: 'Europe/London', monitoring: true, paused: false, enabled: true },
      ],
    } as WorkflowsFile;
    await syncWorkflowsFile(t.db, twice, new Date('2026-03-01T00:00:00Z'), {}, ROUTING);
    for (const at of ['2026-03-20T00:00:00Z', '2026-03-29T12:00:00Z', '2026-04-20T00:00:00Z', '2026-10-20T00:00:00Z', '2026-10-25T12:00:00Z']) {
      expect(await recordPolicyVersions(t.db, { now: new Date(at), config: ROUTING, changedBy: 'api' }), at).toBe(0);
      await syncWorkflowsFile(t.db, twice, new Date(at), {}, ROUTING);
    }
    const all = await versions();
    expect(all.map((v) => [v.version, v.changedBy])).toEqual([
      [1, 'workflows file'],
      [1, 'workflows file'],
    ]);
    expect(all.map((v) => (v.policy as { cadenceSeconds: number }).cadenceSeconds).sort()).toEqual([2_678_400, 43_200]);
  });

  it('a change of the derived defaults alone is put down to the release', async () => {
    await sync();
    // What a new release of the defaults looks like from the ledger: the stored policy no longer matches.
    await t.db.updateTable('policyVersions').set({ policy: JSON.stringify({ ...(await versions())[0]!.policy, alertAfter: 3 }) }).execute();
    expect(await recordPolicyVersions(t.db, { now: engine.clock.now(), config: ROUTING, changedBy: 'api' })).toBe(1);
    expect((await versions()).map((v) => v.changedBy)).toEqual(['workflows file', DEFAULTS_RELEASE]);
  });

  it('alerts and their events record the version they were decided under', async () => {
    await sync();
    const wf = await workflow();
    await report(wf, 1, 'failed');
    await report(wf, 2, 'failed');
    const [alert] = await alerts();
    expect(alert).toMatchObject({ status: 'open', policyVersion: 1 });
    const recorded = await events(alert!.id);
    expect(recorded.map((e) => e.kind)).toContain('opened');
    expect(new Set(recorded.map((e) => e.policyVersion))).toEqual(new Set([1]));
  });

  it('stricter while open: told once in the thread, the alert continues under the new rules (three successes to resolve)', async () => {
    await sync();
    const wf = await workflow();
    await report(wf, 1, 'failed');
    await report(wf, 2, 'failed');
    const [open] = await alerts();

    await sync({ recoverAfter: 3 });
    await sync({ recoverAfter: 3 }); // a re-sync tells nothing more
    const told = (await events(open!.id)).filter((e) => e.kind === 'policy_changed');
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ policyVersion: 2, data: { from: 1, to: 2, changes: [{ field: 'recoverAfter', from: 1, to: 3 }] } });
    const rows = await t.db.selectFrom('notifications').innerJoin('alertEvents', 'alertEvents.id', 'notifications.eventId').select('notifications.destination').where('alertEvents.kind', '=', 'policy_changed').execute();
    expect(rows.map((r) => r.destination).sort()).toEqual(['slack:CACME', `slack:${PLATFORM}`]);
    expect((await alerts())[0]).toMatchObject({ policyVersion: 2, policy: expect.objectContaining({ recoverAfter: 3 }) });

    await report(wf, 3, 'succeeded');
    await report(wf, 4, 'succeeded');
    expect((await alerts())[0]).toMatchObject({ status: 'open', healthyStreak: 2 });
    await report(wf, 5, 'succeeded');
    const [closed] = await alerts();
    expect(closed).toMatchObject({ status: 'resolved' });
    expect((await events(closed!.id)).at(-1)).toMatchObject({ kind: 'resolved', policyVersion: 2 });
  });

  it('looser while open: a larger escalation multiplier moves the deadline later, with the cadence captured at opening', async () => {
    await sync();
    const wf = await workflow();
    await report(wf, 1, 'failed');
    await report(wf, 2, 'failed');
    const [open] = await alerts();
    const deadline = open!.escalateAt!.getTime();
    const multiplier = (open!.policy as { escalationMultiplier: number }).escalationMultiplier;
    expect(deadline - open!.openedAt.getTime()).toBe(Math.round(multiplier * open!.cadenceSeconds * 1000));
    expect(multiplier).toBeLessThan(10);

    await sync({ escalationMultiplier: 10 });
    const [moved] = await alerts();
    expect(moved!.escalateAt!.getTime() - open!.openedAt.getTime()).toBe(10 * open!.cadenceSeconds * 1000);
    expect(moved!.cadenceSeconds).toBe(open!.cadenceSeconds);
    // The old deadline passes: nothing escalates.
    engine.clock.set(new Date(deadline + minutes(5)));
    await engine.step();
    expect((await alerts())[0]).toMatchObject({ severity: 'warning', escalatedAt: null });
  });

  it('a change while open keeps the time the escalation clock stood still (a pause); a new multiplier moves the deadline by its own difference only', async () => {
    await sync();
    const wf = await workflow();
    await report(wf, 1, 'failed');
    await report(wf, 2, 'failed');
    const [open] = await alerts();
    const deadline = open!.escalateAt!.getTime();
    const multiplier = (open!.policy as { escalationMultiplier: number }).escalationMultiplier;
    const deps = { db: t.db, clock: engine.clock, config: engine.deps.config };

    // Paused for an hour: the escalation clock stands still, the deadline moves an hour later.
    engine.clock.set(new Date(open!.openedAt.getTime() + minutes(10)));
    expect((await pauseWorkflow(deps, { workflowId: wf.id, actor: 'U0ALICE', scope: {} })).kind).toBe('ok');
    engine.clock.set(new Date(open!.openedAt.getTime() + minutes(10) + HOUR));
    expect((await resumeWorkflow(deps, { workflowId: wf.id, actor: 'U0ALICE', scope: {} })).kind).toBe('ok');
    expect((await alerts())[0]!.escalateAt!.getTime()).toBe(deadline + HOUR);

    // A change of another rule does not take back that hour.
    await sync({ recoverAfter: 3 });
    expect((await alerts())[0]).toMatchObject({ policyVersion: 2 });
    expect((await alerts())[0]!.escalateAt!.getTime()).toBe(deadline + HOUR);
    // The original deadline passes: still a warning.
    engine.clock.set(new Date(deadline + minutes(5)));
    await engine.step();
    expect((await alerts())[0]).toMatchObject({ severity: 'warning', escalatedAt: null });

    // A larger multiplier moves it by the difference, the pause kept.
    await sync({ recoverAfter: 3, escalationMultiplier: multiplier + 2 });
    expect((await alerts())[0]!.escalateAt!.getTime()).toBe(deadline + HOUR + 2 * open!.cadenceSeconds * 1000);
  });

  /** The release that versioned overlap, catch-up and the owner's reminders: what it reads from versions stored before. */
  const LATER_FIELDS = ['overlap', 'catchUpSeconds', 'remindAfterSeconds', 'ownershipLapsesAfterReminders'];
  const storedBeforeLaterFields = async () => {
    for (const v of await versions()) {
      const policy = Object.fromEntries(Object.entries(v.policy as Record<string, unknown>).filter(([k]) => !LATER_FIELDS.includes(k)));
      await t.db.updateTable('policyVersions').set({ policy: JSON.stringify(policy) }).where('workflowId', '=', v.workflowId).where('version', '=', v.version).execute();
    }
  };
  const policyChangedEvents = async (alertId: number) => (await events(alertId)).filter((e) => e.kind === 'policy_changed');

  it('the upgrade that versions catch-up, overlap and reminders records nothing and tells no thread, an override set before included', async () => {
    await sync({ catchUpSeconds: 900, ownershipLapsesAfterReminders: 5 });
    const wf = await workflow();
    await report(wf, 1, 'failed');
    await report(wf, 2, 'failed');
    const [open] = await alerts();
    await storedBeforeLaterFields();

    expect(await recordPolicyVersions(t.db, { now: engine.clock.now(), config: ROUTING, changedBy: DEFAULTS_RELEASE })).toBe(0);
    await sync({ catchUpSeconds: 900, ownershipLapsesAfterReminders: 5 });
    expect(await versions()).toHaveLength(1);
    expect(await policyChangedEvents(open!.id)).toEqual([]);

    // An explicit change on a version that predates the field is a change.
    await sync({ catchUpSeconds: 600, ownershipLapsesAfterReminders: 5 });
    expect((await versions()).map((v) => v.version)).toEqual([1, 2]);
    expect((await versions())[1]!.policy).toMatchObject({ catchUpSeconds: 600, overlap: 'allow', remindAfterSeconds: null, ownershipLapsesAfterReminders: 5 });
  });

  it('an explicit change of catch-up or overlap is a version the open alert does not hear of; a change of its reminders it hears and follows', async () => {
    await sync();
    const wf = await workflow();
    await report(wf, 1, 'failed');
    await report(wf, 2, 'failed');
    const [open] = await alerts();
    expect(open!.policy).toMatchObject({ remindAfterSeconds: null, ownershipLapsesAfterReminders: 3 });

    await sync({ catchUpSeconds: 900, overlap: 'skip' });
    expect((await versions()).map((v) => [v.version, v.changedBy])).toEqual([
      [1, 'workflows file'],
      [2, 'workflows file'],
    ]);
    expect((await alerts())[0]).toMatchObject({ policyVersion: 2 });
    expect((await alerts())[0]!.policy).not.toHaveProperty('catchUpSeconds');
    expect(await policyChangedEvents(open!.id)).toEqual([]);

    await sync({ catchUpSeconds: 600, overlap: 'skip', remindAfterSeconds: 600, ownershipLapsesAfterReminders: 0 });
    const told = await policyChangedEvents(open!.id);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({
      policyVersion: 3,
      data: {
        from: 2,
        to: 3,
        changes: [
          { field: 'remindAfterSeconds', from: null, to: 600 },
          { field: 'ownershipLapsesAfterReminders', from: 3, to: 0 },
        ],
        kept: [],
      },
    });
    expect((await alerts())[0]!.policy).toMatchObject({ remindAfterSeconds: 600, ownershipLapsesAfterReminders: 0 });
  });
});
