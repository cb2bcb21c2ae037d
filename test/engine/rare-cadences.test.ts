import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun, stepUntil } from '../helpers/engine-harness.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';

/** Crons that fire years apart, through the real engine on a manual clock: missed ticks and the escalation deadline. */

let t: TestDatabase;

beforeEach(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
});
afterEach(async () => t.drop());

const HOUR = 3_600_000;

describe('rare cadences in the engine', () => {
  it('a leap-day job is not missed on the days between (nor on 28 February or 1 March), and is missed once on its leap day', async () => {
    const wf = await makeWorkflow(t.db, { name: 'leap', cron: '0 0 29 2 *', nextTickAt: at('2028-02-29T00:00:00Z') });
    const runs = () => t.db.selectFrom('runs').select(['tick', 'status']).where('workflowId', '=', wf.id).orderBy('tick').execute();
    // A year without a 29 February, watched hour by hour across its end of February.
    const early = createEngine(t.db, at('2027-02-27T22:00:00Z'));
    await early.step();
    await stepUntil(early, at('2027-03-01T02:00:00Z'), HOUR);
    expect(await runs()).toEqual([]);
    // The leap day: no run by 00:30 (grace: 30 min) is one missed tick, a confirmed failure, critical at once.
    const leap = createEngine(t.db, at('2028-02-28T23:50:00Z'), {}, 'engine-b');
    await leap.step();
    await stepUntil(leap, at('2028-02-29T00:29:00Z'), 5 * 60_000);
    expect(await runs()).toEqual([]);
    await stepUntil(leap, at('2028-02-29T01:00:00Z'), 5 * 60_000);
    await stepUntil(leap, at('2028-03-01T02:00:00Z'), HOUR);
    expect(await runs()).toEqual([{ tick: at('2028-02-29T00:00:00Z'), status: 'missed' }]);
    const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
    expect(alert).toMatchObject({ status: 'open', severity: 'critical', consecutiveFailures: 1, cadenceSeconds: 1461 * 86_400, escalateAt: null });
    const next = await t.db.selectFrom('workflows').select('nextTickAt').where('id', '=', wf.id).executeTakeFirstOrThrow();
    expect(next.nextTickAt).toEqual(at('2032-02-29T00:00:00Z'));
  });

  it("a yearly job's warning (first severity overridden) escalates a day after it opened, not a year", async () => {
    const wf = await makeWorkflow(t.db, { name: 'yearly-report', cron: '0 0 1 1 *', nextTickAt: at('2027-01-01T00:00:00Z'), policy: JSON.stringify({ firstSeverity: 'warning' }) });
    const engine = createEngine(t.db, at('2026-12-31T23:50:00Z'));
    await engine.step();
    await stepUntil(engine, at('2027-01-01T00:05:00Z'));
    await reportRun(t.db, wf, at('2027-01-01T00:00:00Z'), { status: 'failed', error: 'ledger export failed' }, engine.clock.now());
    await engine.step();
    const opened = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
    expect(opened).toMatchObject({ status: 'open', severity: 'warning', cadenceSeconds: 365 * 86_400, escalateAt: at('2027-01-02T00:05:00Z') });
    await stepUntil(engine, at('2027-01-02T00:04:00Z'), HOUR);
    expect((await t.db.selectFrom('alerts').select('severity').where('id', '=', opened.id).executeTakeFirstOrThrow()).severity).toBe('warning');
    await stepUntil(engine, at('2027-01-02T00:06:00Z'));
    expect((await t.db.selectFrom('alerts').select('severity').where('id', '=', opened.id).executeTakeFirstOrThrow()).severity).toBe('critical');
    const kinds = await t.db.selectFrom('alertEvents').select('kind').where('alertId', '=', opened.id).orderBy('id').execute();
    expect(kinds.map((k) => k.kind)).toContain('escalated');
  });
});
