import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { fireDueTicks } from '../../src/engine/tick-scheduler.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { replicaDeps, settledRuns } from './support.js';

let t: TestDatabase;
let dir: string;
beforeAll(async () => {
  t = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'sb-retries-'));
  await makeTenant(t.db);
});
afterAll(async () => {
  await t.drop();
  await rm(dir, { recursive: true, force: true });
});

/** A command that fails its first `failures` attempts (counting in a file), then succeeds. */
const flaky = (counter: string, failures: number) =>
  `n=$(cat ${counter} 2>/dev/null || echo 0); echo $((n+1)) > ${counter}; echo "attempt $ATTEMPT of tick $TICK"; if [ "$n" -lt ${failures} ]; then echo "ETIMEDOUT talking to the warehouse" >&2; exit 1; fi`;

const settle = (deps: ReturnType<typeof replicaDeps>, workflowId: number) => settledRuns(t.db, deps, workflowId);

describe('a managed command workflow through the engine', () => {
  it('retries a failing command per its profile (hourly: 2 retries) and writes the verdict onto the tick', async () => {
    const clock = new ManualClock('2026-03-10T03:00:00Z');
    const counter = join(dir, 'flaky-once');
    const wf = await makeWorkflow(t.db, {
      cron: '0 * * * *',
      mode: 'managed',
      launcher: JSON.stringify({ kind: 'command', command: flaky(counter, 1) }),
      nextTickAt: at('2026-03-10T03:00:00Z'),
    });
    const deps = replicaDeps(t.db, clock);
    await fireDueTicks(deps);
    await settle(deps, wf.id);
    const rows = await t.db.selectFrom('runs').selectAll().where('workflowId', '=', wf.id).orderBy('attempt').execute();
    expect(rows.map((r) => [r.attempt, r.trigger, r.attemptStatus])).toEqual([
      [1, 'schedule', 'failed'],
      [2, 'retry', 'succeeded'],
    ]);
    expect(rows[1]!.originalRunId).toBe(rows[0]!.id);
    expect(rows[1]!.tick).toEqual(rows[0]!.tick);
    expect(rows[0]).toMatchObject({ status: 'succeeded', outcomeNote: expect.stringMatching(/recovered on attempt 2/) });
    expect(rows[1]!.logExcerpt).toBe('attempt 2 of tick 2026-03-10T03:00:00.000Z\n');
    expect(await readFile(counter, 'utf8')).toBe('2\n');
    expect(await t.db.selectFrom('alerts').select('id').where('workflowId', '=', wf.id).execute()).toEqual([]);
  });

  it('stops after the budget: three attempts of a command that always fails, and the tick is failed with the last error', async () => {
    const clock = new ManualClock('2026-03-10T04:00:00Z');
    const counter = join(dir, 'always');
    const wf = await makeWorkflow(t.db, {
      cron: '0 * * * *',
      mode: 'managed',
      launcher: JSON.stringify({ kind: 'command', command: flaky(counter, 99) }),
      nextTickAt: at('2026-03-10T04:00:00Z'),
    });
    const deps = replicaDeps(t.db, clock);
    await fireDueTicks(deps);
    await settle(deps, wf.id);
    const rows = await t.db.selectFrom('runs').selectAll().where('workflowId', '=', wf.id).orderBy('attempt').execute();
    expect(rows.map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(rows[0]).toMatchObject({ status: 'failed', error: 'exited with code 1: ETIMEDOUT talking to the warehouse' });
    expect(await readFile(counter, 'utf8')).toBe('3\n');
  });
});
