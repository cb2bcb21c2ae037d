import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { runLoop } from '../../src/engine/runner.js';
import { runLoops } from '../../src/launch/index.js';
import { fireDueTicks, tickSchedulerLoop } from '../../src/launch/tick-scheduler.js';
import { silentLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { CountingClock, eventually, replicaDeps } from './support.js';

let t: TestDatabase;
let dir: string;
beforeAll(async () => {
  t = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'sb-ticks-'));
  await makeTenant(t.db);
});
afterAll(async () => {
  await t.drop();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await t.db.deleteFrom('runs').execute();
  await t.db.deleteFrom('workflows').execute();
});

const originals = (workflowId: number) =>
  t.db.selectFrom('runs').selectAll().where('workflowId', '=', workflowId).where('originalRunId', 'is', null).orderBy('tick').execute();

describe('tick scheduler', () => {
  it('fires a * * * * * workflow once per minute with two replicas ticking concurrently, each tick launched once', async () => {
    const clock = new CountingClock('2026-03-10T02:00:00.500Z');
    const ledger = join(dir, 'fired.txt');
    const wf = await makeWorkflow(t.db, {
      name: 'every-minute',
      cron: '* * * * *',
      mode: 'managed',
      launcher: JSON.stringify({ kind: 'command', command: `echo "$TICK $RUN_ID $TRIGGER $ATTEMPT" >> ${ledger}` }),
      nextTickAt: at('2026-03-10T02:01:00Z'),
    });
    const abort = new AbortController();
    const replicas = [replicaDeps(t.db, clock), replicaDeps(t.db, clock)];
    const loops = replicas.map((deps) => runLoop(tickSchedulerLoop(deps), { clock, logger: silentLogger, signal: abort.signal }));
    try {
      for (let minute = 1; minute <= 5; minute++) {
        await eventually(() => clock.sleeping === 2);
        clock.set(`2026-03-10T02:0${minute}:00Z`);
        await eventually(async () => {
          const rows = await originals(wf.id);
          return rows.length === minute && rows.every((r) => r.status === 'succeeded') && rows;
        });
      }
      // Let both loops go round a few more times at the last minute: still nothing fires twice.
      for (let i = 0; i < 3; i++) {
        await eventually(() => clock.sleeping === 2);
        const before = loops.map((l) => l.status.ticks);
        clock.advance(1000);
        await eventually(() => loops.every((l, j) => l.status.ticks > before[j]!));
      }
    } finally {
      abort.abort();
      await Promise.all(loops.map((l) => l.done));
    }
    const rows = await originals(wf.id);
    expect(rows.map((r) => r.tick!.toISOString())).toEqual([1, 2, 3, 4, 5].map((m) => `2026-03-10T02:0${m}:00.000Z`));
    expect(rows.every((r) => r.trigger === 'schedule' && r.attempt === 1)).toBe(true);
    const fired = (await readFile(ledger, 'utf8')).trim().split('\n');
    expect(fired).toHaveLength(5);
    expect(fired.map((l) => l.split(' ')[0])).toEqual(rows.map((r) => r.tick!.toISOString()));
    expect(fired.map((l) => l.split(' ').slice(1))).toEqual(rows.map((r) => [String(r.id), 'schedule', '1']));
    const wfAfter = await t.db.selectFrom('workflows').select('nextTickAt').where('id', '=', wf.id).executeTakeFirstOrThrow();
    expect(wfAfter.nextTickAt?.toISOString()).toBe('2026-03-10T02:06:00.000Z');
  });

  it('fires on the tick\'s own second: a loop that sees the tick inside its interval sleeps until exactly then', async () => {
    const clock = new ManualClock('2026-03-10T02:00:59.300Z');
    const wf = await makeWorkflow(t.db, {
      cron: '* * * * *',
      mode: 'managed',
      launcher: JSON.stringify({ kind: 'command', command: 'true' }),
      nextTickAt: at('2026-03-10T02:01:00Z'),
    });
    const deps = replicaDeps(t.db, clock);
    const ticking = fireDueTicks(deps);
    await eventually(() => clock.nextWake()?.toISOString() === '2026-03-10T02:01:00.000Z');
    expect(await originals(wf.id)).toHaveLength(0);
    clock.set('2026-03-10T02:01:00Z');
    expect(await ticking).toBe(true);
    await fireDueTicks(deps);
    const [run] = await originals(wf.id);
    expect(run!.tick!.toISOString()).toBe('2026-03-10T02:01:00.000Z');
    expect(run!.startedAt!.toISOString()).toBe('2026-03-10T02:01:00.000Z');
  });

  it('after downtime fires only the latest due tick and records the older ones as skipped', async () => {
    const clock = new ManualClock('2026-03-10T02:10:30Z');
    const wf = await makeWorkflow(t.db, {
      cron: '* * * * *',
      mode: 'managed',
      launcher: JSON.stringify({ kind: 'command', command: 'true' }),
      nextTickAt: at('2026-03-10T02:01:00Z'),
    });
    const deps = replicaDeps(t.db, clock);
    expect(await fireDueTicks(deps)).toBe(true);
    const rows = await originals(wf.id);
    expect(rows).toHaveLength(10);
    const skipped = rows.filter((r) => r.status === 'skipped');
    expect(skipped.map((r) => r.tick!.toISOString().slice(11, 16))).toEqual(['02:01', '02:02', '02:03', '02:04', '02:05', '02:06', '02:07', '02:08', '02:09']);
    // Skipped ticks are neither failures for the evaluator nor work for the poller.
    expect(skipped.every((r) => r.error === null && r.processedAt !== null && r.startedAt === null)).toBe(true);
    const fired = rows.at(-1)!;
    expect(fired.tick!.toISOString()).toBe('2026-03-10T02:10:00.000Z');
    expect(['running', 'succeeded']).toContain(fired.status);
    const after = await t.db.selectFrom('workflows').select('nextTickAt').where('id', '=', wf.id).executeTakeFirstOrThrow();
    expect(after.nextTickAt?.toISOString()).toBe('2026-03-10T02:11:00.000Z');
    // Nothing more is due until 02:11.
    expect(await fireDueTicks(deps)).toBe(false);
    expect(await originals(wf.id)).toHaveLength(10);
  });

  it('advances next_tick_at in the workflow\'s time zone across a spring-forward night', async () => {
    // Europe/Berlin skips 02:00–03:00 on 29 March 2026: the 02:30 job fires at 03:30 local (01:30 UTC).
    const clock = new ManualClock('2026-03-28T01:30:00Z');
    const wf = await makeWorkflow(t.db, {
      cron: '30 2 * * *',
      timezone: 'Europe/Berlin',
      mode: 'managed',
      launcher: JSON.stringify({ kind: 'command', command: 'true' }),
      nextTickAt: at('2026-03-28T01:30:00Z'),
    });
    await fireDueTicks(replicaDeps(t.db, clock));
    const after = await t.db.selectFrom('workflows').select('nextTickAt').where('id', '=', wf.id).executeTakeFirstOrThrow();
    expect(after.nextTickAt?.toISOString()).toBe('2026-03-29T01:30:00.000Z');
  });

  it('does not fire paused, disabled or observed workflows, nor those of a disabled tenant', async () => {
    const clock = new ManualClock('2026-03-10T02:05:00Z');
    const due = { cron: '* * * * *', launcher: JSON.stringify({ kind: 'command', command: 'true' }), nextTickAt: at('2026-03-10T02:05:00Z') };
    const paused = await makeWorkflow(t.db, { ...due, mode: 'managed', paused: true });
    const disabled = await makeWorkflow(t.db, { ...due, mode: 'managed', enabled: false });
    const observed = await makeWorkflow(t.db, { ...due, mode: 'observed' });
    await makeTenant(t.db, { id: 'gone', name: 'Gone', channel: null, enabled: false });
    const orphan = await makeWorkflow(t.db, { ...due, tenantId: 'gone', mode: 'managed' });
    expect(await fireDueTicks(replicaDeps(t.db, clock))).toBe(false);
    for (const wf of [paused, disabled, observed, orphan]) expect(await originals(wf.id)).toHaveLength(0);
  });

  it('gives the runs loops a lease renewal alongside the scheduler', () => {
    const deps = replicaDeps(t.db, new ManualClock('2026-03-10T02:00:00Z'));
    expect(runLoops(deps).map((l) => l.name)).toEqual(['tick-scheduler', 'run-lease-renewal']);
  });
});
