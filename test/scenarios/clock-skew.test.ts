import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reportRun } from '../../src/services/ingest.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, type Engine, stepUntil } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * An outside scheduler's clock is never exactly the bot's: a job whose host
 * runs a second fast (or, NTP broken, minutes fast) reports its start that
 * much before its tick. That start is the tick's run, not a run outside any
 * tick followed by a "missed" tick.
 */

const SECOND = 1000;
let t: TestDatabase;
let engine: Engine;

beforeEach(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
});
afterEach(async () => t.drop());

const report = (workflow: string, status: 'running' | 'succeeded', externalId: string) => reportRun(engine.deps, { tenant: 'acme', workflow, status, externalId }, {});

const rowsOf = (workflowId: number) =>
  t.db.selectFrom('runs').select(['tick', 'status', 'trigger']).where('workflowId', '=', workflowId).orderBy('id').execute();

describe('a job whose clock runs a little ahead of the bot', () => {
  it('a daily job that starts two seconds before its tick is that tick\'s run: nothing missed, no alert', async () => {
    engine = createEngine(t.db, '2026-03-10T08:00:00Z');
    const wf = await makeWorkflow(t.db, { name: 'daily', cron: '0 9 * * *', mode: 'observed', nextTickAt: new Date('2026-03-10T09:00:00Z') });
    await engine.step();
    await stepUntil(engine, new Date('2026-03-10T08:59:58Z'));
    expect((await report('daily', 'running', 'r1')).kind).toBe('created');
    await stepUntil(engine, new Date('2026-03-10T09:05:00Z'));
    expect((await report('daily', 'succeeded', 'r1')).kind).toBe('existing');
    // Well past the tick's grace (half an hour for a daily job).
    await stepUntil(engine, new Date('2026-03-10T10:00:00Z'));
    expect(await rowsOf(wf.id)).toEqual([{ tick: new Date('2026-03-10T09:00:00Z'), status: 'succeeded', trigger: 'schedule' }]);
    expect(await t.db.selectFrom('alerts').selectAll().execute()).toEqual([]);
  });

  it('a five-minute job one second early every time: every tick has its run, none is missed', async () => {
    engine = createEngine(t.db, '2026-03-10T08:00:00Z');
    const wf = await makeWorkflow(t.db, { name: 'feed', cron: '*/5 * * * *', mode: 'observed', nextTickAt: new Date('2026-03-10T08:05:00Z') });
    await engine.step();
    for (let i = 1; i <= 12; i++) {
      const tick = new Date(Date.parse('2026-03-10T08:00:00Z') + i * 5 * 60 * SECOND);
      await stepUntil(engine, new Date(tick.getTime() - SECOND), 30 * SECOND);
      expect((await report('feed', 'running', `r${i}`)).kind).toBe('created');
      await stepUntil(engine, new Date(tick.getTime() + 20 * SECOND), 30 * SECOND);
      await report('feed', 'succeeded', `r${i}`);
    }
    await stepUntil(engine, new Date('2026-03-10T09:03:00Z'), 30 * SECOND);
    const rows = await rowsOf(wf.id);
    expect(rows.map((r) => `${r.tick?.toISOString().slice(11, 16)} ${r.status} ${r.trigger}`)).toEqual(
      Array.from({ length: 12 }, (_, i) => `${new Date(Date.parse('2026-03-10T08:05:00Z') + i * 5 * 60 * SECOND).toISOString().slice(11, 16)} succeeded schedule`),
    );
    expect(await t.db.selectFrom('alerts').selectAll().execute()).toEqual([]);
  });

  it('a report naming its tick two seconds before it comes is that tick\'s run; ten minutes before, a future tick', async () => {
    engine = createEngine(t.db, '2026-03-10T08:00:00Z');
    const wf = await makeWorkflow(t.db, { name: 'daily', cron: '0 9 * * *', mode: 'observed', nextTickAt: new Date('2026-03-10T09:00:00Z') });
    await engine.step();
    const tick = new Date('2026-03-10T09:00:00Z');
    await stepUntil(engine, new Date('2026-03-10T08:50:00Z'));
    expect((await reportRun(engine.deps, { tenant: 'acme', workflow: 'daily', status: 'running', tick, externalId: 'early' }, {})).kind).toBe('future_tick');
    await stepUntil(engine, new Date('2026-03-10T08:59:58Z'));
    expect((await reportRun(engine.deps, { tenant: 'acme', workflow: 'daily', status: 'running', tick, externalId: 'r1' }, {})).kind).toBe('created');
    await stepUntil(engine, new Date('2026-03-10T09:05:00Z'));
    expect((await report('daily', 'succeeded', 'r1')).kind).toBe('existing');
    await stepUntil(engine, new Date('2026-03-10T10:00:00Z'));
    expect(await rowsOf(wf.id)).toEqual([{ tick, status: 'succeeded', trigger: 'schedule' }]);
    expect(await t.db.selectFrom('alerts').selectAll().execute()).toEqual([]);
  });

  it('a daily job on a host three minutes fast (NTP broken) is its tick\'s run: no critical "missed" page for a job that ran', async () => {
    engine = createEngine(t.db, '2026-03-10T08:00:00Z');
    const wf = await makeWorkflow(t.db, { name: 'daily', cron: '0 9 * * *', mode: 'observed', nextTickAt: new Date('2026-03-10T09:00:00Z') });
    await engine.step();
    await stepUntil(engine, new Date('2026-03-10T08:57:00Z'));
    expect((await report('daily', 'running', 'r1')).kind).toBe('created');
    await stepUntil(engine, new Date('2026-03-10T09:05:00Z'));
    await report('daily', 'succeeded', 'r1');
    await stepUntil(engine, new Date('2026-03-10T10:00:00Z'));
    // Before, the start was a run outside any tick and the 09:00 tick was recorded missed at 09:30: a critical page every night.
    expect(await rowsOf(wf.id)).toEqual([{ tick: new Date('2026-03-10T09:00:00Z'), status: 'succeeded', trigger: 'schedule' }]);
    expect(await t.db.selectFrom('alerts').selectAll().execute()).toEqual([]);
  });

  it('a start well before the tick (more than the early allowance) stays a run outside any tick', async () => {
    engine = createEngine(t.db, '2026-03-10T08:00:00Z');
    const wf = await makeWorkflow(t.db, { name: 'daily', cron: '0 9 * * *', mode: 'observed', nextTickAt: new Date('2026-03-10T09:00:00Z') });
    await engine.step();
    await stepUntil(engine, new Date('2026-03-10T08:54:00Z'));
    await report('daily', 'succeeded', 'early');
    expect(await rowsOf(wf.id)).toEqual([{ tick: null, status: 'succeeded', trigger: 'external' }]);
  });

  it('a managed workflow\'s tick is the scheduler\'s: an outside report just before it takes no tick', async () => {
    engine = createEngine(t.db, '2026-03-10T08:59:59Z');
    const wf = await makeWorkflow(t.db, { name: 'managed', cron: '0 9 * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true' }), nextTickAt: new Date('2026-03-10T09:00:00Z') });
    await report('managed', 'succeeded', 'outside');
    expect(await rowsOf(wf.id)).toEqual([{ tick: null, status: 'succeeded', trigger: 'external' }]);
  });
});
