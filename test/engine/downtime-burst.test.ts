import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fireDueTicks } from '../../src/engine/tick-scheduler.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine } from '../helpers/engine-harness.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * Every replica down for three hours: an every-minute managed job's 179 due
 * ticks are recorded missed at once (catch-up.ts) and the latest fires late.
 * They open one warning; before, the warning escalated to critical at once,
 * "kept failing" on 179 failures it opened with, paging the on-call seconds
 * before the late run succeeded and resolved it.
 */

let t: TestDatabase;
beforeEach(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
});
afterEach(async () => t.drop());

const kinds = async () => (await t.db.selectFrom('alertEvents').select('kind').orderBy('id').execute()).map((e) => e.kind).filter((k) => k !== 'failure_recorded');

describe('an every-minute managed job after the bot was down for three hours', () => {
  async function afterDowntime(outcome: 'succeeded' | 'failed') {
    const engine = createEngine(t.db, '2026-03-10T05:00:20Z');
    await makeWorkflow(t.db, { cron: '* * * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'scripted' }), nextTickAt: at('2026-03-10T02:01:00Z') });
    engine.launcher.otherwise({ status: outcome, afterMs: 20_000 } as never);
    await fireDueTicks(engine.deps);
    await engine.step();
    return engine;
  }

  it('opens one warning that does not escalate on the missed ticks it opened with, and the late run resolves it', async () => {
    const engine = await afterDowntime('succeeded');
    expect(await kinds()).toEqual(['opened']);
    engine.clock.advance(20_000);
    await engine.step();
    expect(await kinds()).toEqual(['opened', 'resolved']);
  });

  it('a job still failing: the late run failing on top of the streak is kept failing, and escalates', async () => {
    const engine = await afterDowntime('failed');
    expect(await kinds()).toEqual(['opened']);
    engine.clock.advance(20_000);
    await engine.step();
    expect(await kinds()).toEqual(['opened', 'error_group_changed', 'escalated']);
    const escalated = await t.db.selectFrom('alertEvents').select('data').where('kind', '=', 'escalated').executeTakeFirstOrThrow();
    expect(escalated.data).toMatchObject({ reason: 'kept_failing' });
  });
});
