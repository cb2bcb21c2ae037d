import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WorkflowsFile } from '../../src/config/workflows-file.js';
import type { Workflow } from '../../src/db/schema.js';
import { runEscalationClock } from '../../src/engine/escalation.js';
import { eventText, plainEventText } from '../../src/notify/event-text.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, PLATFORM, reportRun, type Engine } from '../helpers/engine-harness.js';
import { minutes } from '../helpers/factories.js';

/**
 * DESIGN.md core idea 6: the escalation deadline is opened_at + multiplier × cadence with the cadence captured
 * at opening, and editing the cron mid-incident does not move it. A new cron changes the derived defaults
 * (the multiplier and the failures before escalating): those are the cadence's, so they stay the ones captured.
 */
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

const file = (cron: string, policy = {}): WorkflowsFile =>
  ({
    tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }],
    workflows: [{ tenant: 'acme', name: 'export', cron, timezone: 'UTC', policy, monitoring: true, paused: false, enabled: true }],
  }) as WorkflowsFile;
const workflow = () => t.db.selectFrom('workflows').selectAll().where('name', '=', 'export').executeTakeFirstOrThrow();
const alert = () => t.db.selectFrom('alerts').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();

async function failAt(wf: Workflow, hour: number) {
  const tick = new Date(START.getTime() + hour * HOUR);
  engine.clock.set(new Date(tick.getTime() + minutes(2)));
  await reportRun(t.db, wf, tick, { status: 'failed', error: 'export to s3 failed' }, engine.clock.now());
  await engine.drain();
}

describe('editing the cron while a warning is open', () => {
  it('hourly → daily: the warning neither escalates at once nor gets a sooner deadline', async () => {
    await syncWorkflowsFile(t.db, file('0 * * * *'), START, {}, ROUTING);
    await failAt(await workflow(), 1);
    await failAt(await workflow(), 2);
    const opened = await alert();
    // Hourly: 2 failures open a warning, 3 × 1 h to escalate, 4 failures escalate.
    expect(opened).toMatchObject({ status: 'open', severity: 'warning', consecutiveFailures: 2, cadenceSeconds: 3600 });
    expect(opened.escalateAt!.getTime() - opened.openedAt.getTime()).toBe(3 * HOUR);

    engine.clock.set(new Date(START.getTime() + 2 * HOUR + minutes(10)));
    await syncWorkflowsFile(t.db, file('0 2 * * *'), engine.clock.now(), {}, ROUTING);
    await runEscalationClock(engine.deps);
    const after = await alert();
    expect(after).toMatchObject({ severity: 'warning', cadenceSeconds: 3600 });
    expect(after.escalateAt!.toISOString()).toBe(opened.escalateAt!.toISOString());
    // Its thread is told what changed, and that the cadence's escalation stays what it opened with.
    const told = await t.db.selectFrom('alertEvents').selectAll().where('alertId', '=', opened.id).where('kind', '=', 'policy_changed').executeTakeFirstOrThrow();
    const kept = (told.data as { kept: { field: string; value: unknown }[] }).kept;
    expect(kept).toEqual(expect.arrayContaining([{ field: 'cadenceSeconds', value: 3600 }, { field: 'escalationMultiplier', value: (opened.policy as { escalationMultiplier: number }).escalationMultiplier }]));
    const text = plainEventText(eventText({ event: told, alert: after, workflow: await workflow() }));
    expect(text).toMatch(/cadence \(seconds\) 3600 → 86400/);
    expect(text).toMatch(/continues under the new rules, but keeps what it opened with: .*cadence \(seconds\) 3600/);
    expect(text).toContain(`escalation multiplier ${(opened.policy as { escalationMultiplier: number }).escalationMultiplier}`);

    // At the deadline captured at opening, not before.
    engine.clock.set(new Date(opened.escalateAt!.getTime() - 1000));
    await runEscalationClock(engine.deps);
    expect((await alert()).severity).toBe('warning');
    engine.clock.set(opened.escalateAt!);
    await runEscalationClock(engine.deps);
    expect(await alert()).toMatchObject({ severity: 'critical' });
  });

  it('an override of the multiplier itself still moves the deadline (a policy change, not a cron edit)', async () => {
    await syncWorkflowsFile(t.db, file('0 * * * *'), START, {}, ROUTING);
    await failAt(await workflow(), 1);
    await failAt(await workflow(), 2);
    const opened = await alert();
    await syncWorkflowsFile(t.db, file('0 * * * *', { escalationMultiplier: 5 }), engine.clock.now(), {}, ROUTING);
    const after = await alert();
    expect(after.escalateAt!.getTime() - opened.openedAt.getTime()).toBe(5 * HOUR);
    // An override is taken as it is: nothing is kept.
    const told = await t.db.selectFrom('alertEvents').selectAll().where('alertId', '=', opened.id).where('kind', '=', 'policy_changed').executeTakeFirstOrThrow();
    expect(told.data).toMatchObject({ changes: [{ field: 'escalationMultiplier', to: 5 }], kept: [] });
    expect(plainEventText(eventText({ event: told, alert: after, workflow: await workflow() }))).toMatch(/continues under the new rules\.$/);
  });
});
