import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reportRun } from '../../src/services/ingest.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, type Engine, stepUntil } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * A weekly backup at 01:30 on Sunday in Lord Howe (+11 in summer, +10:30 in
 * winter: a 30-minute DST change), observed: the customer's own cron runs it
 * and pings the bot. On 5 April 2026, the first Sunday of April, clocks go
 * back from 02:00 LHDT to 01:30 LHST at 15:00 UTC, so 01:30 comes twice:
 * 14:30 and 15:00 UTC. The bot places the tick at the first pass; a
 * scheduler may run it at either (Kubernetes at both). A run at either pass
 * is the tick's; silence is missed only after the second pass plus the grace
 * (half an hour for a weekly job), and then pages at once (weekly: critical).
 */

const FIRST_PASS = new Date('2026-04-04T14:30:00Z');
const SECOND_PASS = new Date('2026-04-04T15:00:00Z');
const min = (n: number) => n * 60_000;

let t: TestDatabase;
let engine: Engine;
beforeEach(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
  engine = createEngine(t.db, '2026-04-04T14:00:00Z');
});
afterEach(async () => t.drop());

async function backup() {
  const wf = await makeWorkflow(t.db, { name: 'backup', cron: '30 1 * * 0', timezone: 'Australia/Lord_Howe', mode: 'observed', nextTickAt: FIRST_PASS });
  await engine.step();
  return wf;
}
const report = (status: 'running' | 'succeeded', externalId: string) => reportRun(engine.deps, { tenant: 'acme', workflow: 'backup', status, externalId }, {});
const runsOf = async (id: number) => (await t.db.selectFrom('runs').select(['tick', 'status', 'trigger']).where('workflowId', '=', id).orderBy('id').execute()).map((r) => [r.tick?.toISOString() ?? null, r.status, r.trigger]);

describe('a weekly Lord Howe backup on the night 01:30 comes twice', { timeout: 60_000 }, () => {
  it('run at the second pass only (cron that ran the hour once, late): the tick\'s run; nothing missed, no alert', async () => {
    const wf = await backup();
    await stepUntil(engine, new Date(SECOND_PASS.getTime() + 1000));
    expect((await report('running', 'b1')).kind).toBe('created');
    await stepUntil(engine, new Date(SECOND_PASS.getTime() + min(20)));
    await report('succeeded', 'b1');
    await stepUntil(engine, new Date(SECOND_PASS.getTime() + min(60)));
    expect(await runsOf(wf.id)).toEqual([[FIRST_PASS.toISOString(), 'succeeded', 'schedule']]);
    expect(await t.db.selectFrom('alerts').selectAll().execute()).toEqual([]);
  });

  it('run at both passes (Kubernetes): the first is the tick\'s, the second a run outside any tick; no alert', async () => {
    const wf = await backup();
    await stepUntil(engine, new Date(FIRST_PASS.getTime() + 1000));
    await report('running', 'k1');
    await stepUntil(engine, new Date(FIRST_PASS.getTime() + min(10)));
    await report('succeeded', 'k1');
    await stepUntil(engine, new Date(SECOND_PASS.getTime() + 1000));
    await report('running', 'k2');
    await stepUntil(engine, new Date(SECOND_PASS.getTime() + min(10)));
    await report('succeeded', 'k2');
    await stepUntil(engine, new Date(SECOND_PASS.getTime() + min(60)));
    expect(await runsOf(wf.id)).toEqual([
      [FIRST_PASS.toISOString(), 'succeeded', 'schedule'],
      [null, 'succeeded', 'external'],
    ]);
    expect(await t.db.selectFrom('alerts').selectAll().execute()).toEqual([]);
  });

  it('silent at both passes: missed at the second pass plus half an hour (15:30 UTC, 02:00 LHST), not before, and pages at once', async () => {
    const wf = await backup();
    await stepUntil(engine, new Date(SECOND_PASS.getTime() + min(29)));
    // Half an hour after the first pass, a run may still come at the second: nothing is decided yet.
    expect(await runsOf(wf.id)).toEqual([]);
    await stepUntil(engine, new Date(SECOND_PASS.getTime() + min(32)));
    const [missed] = await t.db.selectFrom('runs').select(['tick', 'status', 'finishedAt']).where('workflowId', '=', wf.id).execute();
    expect(missed).toMatchObject({ tick: FIRST_PASS, status: 'missed' });
    expect(missed!.finishedAt!.toISOString()).toBe('2026-04-04T15:30:00.000Z');
    const alerts = await t.db.selectFrom('alerts').selectAll().execute();
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ severity: 'critical', status: 'open', consecutiveFailures: 1 });
  });
});
