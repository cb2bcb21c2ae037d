import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { sql } from 'kysely';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { runLoop } from '../../src/engine/runner.js';
import { runLoops } from '../../src/engine/index.js';
import { fireDueTicks, tickSchedulerLoop } from '../../src/engine/tick-scheduler.js';
import { silentLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeRun, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { CountingClock, eventually, recordingReplica, replicaDeps } from './support.js';
import { createEngine } from '../helpers/engine-harness.js';
import { pauseWorkflow, resumeWorkflow } from '../../src/services/workflow-state.js';

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
  // Cascades to the alerts, events and outbox rows a test's missed ticks opened.
  await sql`truncate runs cascade`.execute(t.db);
  await t.db.deleteFrom('workflows').execute();
});

/** `count` managed workflows of one cron, due at `due`, in one statement. */
async function seedDue(count: number, cron: string, due: Date, prefix = 'bulk') {
  await sql`
    insert into workflows (tenant_id, name, cron, mode, launcher, ping_key, next_tick_at)
    select 'acme', ${prefix} || '-' || g, ${cron}, 'managed', '{"kind":"command","command":"true"}'::jsonb, ${prefix} || '-pk-' || g, ${due}
    from generate_series(1, ${count}) g
  `.execute(t.db);
}

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

  it('after downtime fires the latest due tick inside its catch-up window and records the older ones as missed', async () => {
    // Every minute: the catch-up window is a minute (half the cadence, at least a minute).
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
    const missed = rows.filter((r) => r.status === 'missed');
    expect(missed.map((r) => r.tick!.toISOString().slice(11, 16))).toEqual(['02:01', '02:02', '02:03', '02:04', '02:05', '02:06', '02:07', '02:08', '02:09']);
    // Missed ticks are confirmed failures: left for the poller, never launched.
    expect(missed.every((r) => r.processedAt === null && r.startedAt === null && r.attemptStatus === 'missed')).toBe(true);
    expect(missed[0]!.error).toBe('missed: not fired by 2026-03-10T02:02:00.000Z (catch-up window 1m); no scheduler ran it in time');
    const fired = rows.at(-1)!;
    expect(fired.tick!.toISOString()).toBe('2026-03-10T02:10:00.000Z');
    expect(['running', 'succeeded']).toContain(fired.status);
    // 30 s late is a scheduler's ordinary latency: no note.
    expect(fired.outcomeNote).toBeNull();
    const after = await t.db.selectFrom('workflows').select('nextTickAt').where('id', '=', wf.id).executeTakeFirstOrThrow();
    expect(after.nextTickAt?.toISOString()).toBe('2026-03-10T02:11:00.000Z');
    // Nothing more is due until 02:11.
    expect(await fireDueTicks(deps)).toBe(false);
    expect(await originals(wf.id)).toHaveLength(10);
  });

  it('catch-up: a tick past its window is missed and nothing is launched; a window set longer than the gap fires once, the older ticks skipped', async () => {
    const launcher = JSON.stringify({ kind: 'command', command: 'true' });
    // Every replica down from 01:50 to 09:30: the nightly 02:00 is 7 h 30 m late, past the daily 6 h window.
    const nightly = await makeWorkflow(t.db, { cron: '0 2 * * *', mode: 'managed', launcher, nextTickAt: at('2026-03-10T02:00:00Z') });
    // Hourly, with a day's window: 03:00 to 09:00 fall due; one run, at 09:00's tick, stands for them.
    const lenient = await makeWorkflow(t.db, { cron: '0 * * * *', mode: 'managed', launcher, nextTickAt: at('2026-03-10T03:00:00Z'), policy: JSON.stringify({ catchUpSeconds: 86_400 }) });
    // Hourly with the default 30 min window: 09:00 fires 30 min late, the ones before are missed.
    const hourly = await makeWorkflow(t.db, { cron: '0 * * * *', mode: 'managed', launcher, nextTickAt: at('2026-03-10T07:00:00Z') });
    const { deps, launched } = recordingReplica(t.db, new ManualClock('2026-03-10T09:30:00Z'));
    expect(await fireDueTicks(deps)).toBe(true);

    const ticks = async (id: number) => (await originals(id)).map((r) => `${r.tick!.toISOString().slice(11, 16)} ${r.status}`);
    expect(await ticks(nightly.id)).toEqual(['02:00 missed']);
    expect(await ticks(lenient.id)).toEqual(['03:00 skipped', '04:00 skipped', '05:00 skipped', '06:00 skipped', '07:00 skipped', '08:00 skipped', '09:00 running']);
    expect(await ticks(hourly.id)).toEqual(['07:00 missed', '08:00 missed', '09:00 running']);
    expect(launched.map((c) => [c.workflow.id, c.tick!.toISOString().slice(11, 16)]).sort()).toEqual([[lenient.id, '09:00'], [hourly.id, '09:00']].sort());
    const [skipped] = await originals(lenient.id);
    expect(skipped!.outcomeNote).toBe('not fired: the scheduler was late; the run of tick 2026-03-10T09:00:00.000Z stands for it (catch-up)');
    const late = (await originals(hourly.id)).at(-1)!;
    expect(late.outcomeNote).toBe('started 30m after its tick (catch-up window 30m)');
    const next = await t.db.selectFrom('workflows').select(['id', 'nextTickAt']).where('id', 'in', [nightly.id, hourly.id]).orderBy('id').execute();
    expect(next.map((w) => w.nextTickAt!.toISOString())).toEqual(['2026-03-11T02:00:00.000Z', '2026-03-10T10:00:00.000Z']);
  });

  it('paused for three days and resumed: nothing fires late and nothing is recorded missed for the paused ticks; the next tick fires', async () => {
    const clock = new ManualClock('2026-03-10T02:30:00Z');
    const wf = await makeWorkflow(t.db, { cron: '0 * * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true' }), nextTickAt: at('2026-03-10T03:00:00Z') });
    const deps = replicaDeps(t.db, clock);
    expect((await pauseWorkflow(deps, { workflowId: wf.id, actor: 'U1', scope: {} })).kind).toBe('ok');
    clock.set('2026-03-13T02:30:00Z');
    expect(await fireDueTicks(deps)).toBe(false);
    expect((await resumeWorkflow(deps, { workflowId: wf.id, actor: 'U1', scope: {} })).kind).toBe('ok');
    expect(await fireDueTicks(deps)).toBe(false);
    expect(await originals(wf.id)).toEqual([]);
    clock.set('2026-03-13T03:00:00Z');
    expect(await fireDueTicks(deps)).toBe(true);
    expect((await originals(wf.id)).map((r) => `${r.tick!.toISOString()} ${r.status === 'running' || r.status === 'succeeded'}`)).toEqual(['2026-03-13T03:00:00.000Z true']);
  });

  it('a nightly missed past its catch-up window is a confirmed failure: the poller opens its alert', async () => {
    const engine = createEngine(t.db, '2026-03-10T09:30:00Z');
    const nightly = await makeWorkflow(t.db, { cron: '0 2 * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true' }), nextTickAt: at('2026-03-10T02:00:00Z') });
    await fireDueTicks(engine.deps);
    await engine.drain();
    const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', nightly.id).executeTakeFirstOrThrow();
    expect(alert).toMatchObject({ status: 'open', severity: 'critical', consecutiveFailures: 1 });
    expect(alert.lastError).toMatch(/^missed: not fired by 2026-03-10T08:00:00.000Z/);
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

  it('fires a crowded boundary (more due workflows than one batch) once each, with two replicas claiming at the same time', async () => {
    const due = at('2026-03-10T12:00:00Z');
    await seedDue(2_600, '* * * * *', due);
    const clock = new ManualClock('2026-03-10T12:00:00.200Z');
    const [a, b] = [recordingReplica(t.db, clock), recordingReplica(t.db, clock)];
    const found = await Promise.all([fireDueTicks(a.deps), fireDueTicks(b.deps)]);
    expect(found.some(Boolean)).toBe(true);

    const { rows } = await sql<{ runs: number; workflows: number; running: number }>`
      select count(*)::int as runs, count(distinct workflow_id)::int as workflows, count(*) filter (where status = 'running')::int as running
      from runs where tick = ${due} and original_run_id is null
    `.execute(t.db);
    expect(rows[0]).toEqual({ runs: 2_600, workflows: 2_600, running: 2_600 });
    // Every original row was handed to exactly one launcher, with its own run id and the tick it belongs to.
    const launched = [...a.launched, ...b.launched];
    expect(launched).toHaveLength(2_600);
    expect(new Set(launched.map((c) => c.runId)).size).toBe(2_600);
    expect(launched.every((c) => c.tick?.getTime() === due.getTime() && c.trigger === 'schedule' && c.attempt === 1)).toBe(true);
    const stillDue = await t.db.selectFrom('workflows').select((eb) => eb.fn.countAll<number>().as('n')).where('nextTickAt', '!=', at('2026-03-10T12:01:00Z')).executeTakeFirstOrThrow();
    expect(Number(stillDue.n)).toBe(0);
    // Nothing is due until the next minute, on either replica.
    expect(await fireDueTicks(a.deps)).toBe(false);
    expect(await fireDueTicks(b.deps)).toBe(false);
    expect(a.launched.length + b.launched.length).toBe(2_600);
  });

  it('in one batch, fires on-time workflows as they are and a workflow behind by a gap at its latest tick, the rest missed', async () => {
    const clock = new ManualClock('2026-03-10T02:05:10Z');
    const launcher = JSON.stringify({ kind: 'command', command: 'true' });
    const onTime = await makeWorkflow(t.db, { cron: '*/5 * * * *', mode: 'managed', launcher, nextTickAt: at('2026-03-10T02:05:00Z') });
    const behind = await makeWorkflow(t.db, { cron: '* * * * *', mode: 'managed', launcher, nextTickAt: at('2026-03-10T02:02:00Z') });
    const daily = await makeWorkflow(t.db, { cron: '0 2 * * *', timezone: 'Europe/Berlin', mode: 'managed', launcher, nextTickAt: at('2026-03-10T01:00:00Z') });
    const { deps, launched } = recordingReplica(t.db, clock);
    expect(await fireDueTicks(deps)).toBe(true);

    const ticks = async (id: number) => (await originals(id)).map((r) => `${r.tick!.toISOString().slice(11, 16)} ${r.status}`);
    expect(await ticks(onTime.id)).toEqual(['02:05 running']);
    // Every minute, a minute's catch-up window: 02:04 is 70 s old, past it.
    expect(await ticks(behind.id)).toEqual(['02:02 missed', '02:03 missed', '02:04 missed', '02:05 running']);
    // 02:00 in Berlin is 01:00 UTC, more than an hour ago: inside a daily job's 6 h window, so it fires late.
    expect(await ticks(daily.id)).toEqual(['01:00 running']);
    expect(launched.map((c) => [c.workflow.id, c.tick!.toISOString().slice(11, 16)]).sort()).toEqual(
      [[onTime.id, '02:05'], [behind.id, '02:05'], [daily.id, '01:00']].sort(),
    );
    const next = await t.db.selectFrom('workflows').select(['id', 'nextTickAt']).orderBy('id').execute();
    expect(next.map((w) => w.nextTickAt!.toISOString())).toEqual(['2026-03-10T02:10:00.000Z', '2026-03-10T02:06:00.000Z', '2026-03-11T01:00:00.000Z']);
    // Each launch is told its own run's deadline budget: the profile of its cadence (5 min, 1 min, daily).
    const budget = Object.fromEntries(launched.map((c) => [c.workflow.id, c.timeoutSeconds]));
    expect(budget[behind.id]).toBe(60);
    expect(budget[onTime.id]).toBe(270);
    expect(budget[daily.id]).toBe(21_600);
  });

  it('does not launch a tick whose original row is already there, and still moves the workflow on', async () => {
    const clock = new ManualClock('2026-03-10T02:05:00Z');
    const launcher = JSON.stringify({ kind: 'command', command: 'true' });
    const taken = await makeWorkflow(t.db, { cron: '* * * * *', mode: 'managed', launcher, nextTickAt: at('2026-03-10T02:05:00Z') });
    const free = await makeWorkflow(t.db, { cron: '* * * * *', mode: 'managed', launcher, nextTickAt: at('2026-03-10T02:05:00Z') });
    // A replica that committed the tick's row and died before moving next_tick_at on (or a restored backup).
    await makeRun(t.db, { workflowId: taken.id, tick: at('2026-03-10T02:05:00Z'), status: 'running', finishedAt: null });
    const { deps, launched } = recordingReplica(t.db, clock);
    expect(await fireDueTicks(deps)).toBe(true);
    expect(launched.map((c) => c.workflow.id)).toEqual([free.id]);
    expect(await originals(taken.id)).toHaveLength(1);
    const after = await t.db.selectFrom('workflows').select('nextTickAt').where('id', '=', taken.id).executeTakeFirstOrThrow();
    expect(after.nextTickAt?.toISOString()).toBe('2026-03-10T02:06:00.000Z');
  });

  it('gives the runs loops a lease renewal alongside the scheduler', () => {
    const deps = replicaDeps(t.db, new ManualClock('2026-03-10T02:00:00Z'));
    expect(runLoops(deps).map((l) => l.name)).toEqual(['tick-scheduler', 'run-lease-renewal']);
  });
});
