import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import type { Workflow } from '../../src/db/schema.js';
import { checkFreshness, WORKER_LOST } from '../../src/engine/freshness.js';
import { leaseRenewalLoop } from '../../src/engine/lease-renewal.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { fireDueTicks } from '../../src/engine/tick-scheduler.js';
import { createCommandLauncher } from '../../src/launch/command-launcher.js';
import { createHttpLauncher } from '../../src/launch/http-launcher.js';
import { launchRun } from '../../src/ledger/launch-run.js';
import { requestRunNow } from '../../src/services/run-now.js';
import { HeldRuns } from '../../src/ledger/run-leases.js';
import { insertRunningRun, RUN_LEASE_MS } from '../../src/ledger/runs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, fireTick, type Engine } from '../helpers/engine-harness.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { eventually, isAlive } from '../runs/support.js';
import { losingFirstCommitAnswer, stallingAfterFirstCommit, stallPoint } from '../helpers/stall-after-commit.js';

/**
 * The zombie replica: a process stopped (SIGSTOP, a GC pause, a frozen VM)
 * for longer than any lease, which then wakes and carries on with what it
 * decided before. Two engines share one database, each on its own clock (B's
 * runs 3 s ahead of A's: clocks of replicas differ); A is stalled by a hook
 * between a commit and what it does next, while B, alive, sees A's lease run
 * out, fails the run as "worker lost" and launches the next attempt itself.
 */
const TICK = at('2026-03-10T02:00:00Z');
const SKEW_MS = 3_000;

let t: TestDatabase;
let dir: string;
const pids: number[] = [];
beforeAll(async () => {
  t = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'sb-zombie-'));
  await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
});
afterAll(async () => {
  for (const pid of pids) if (isAlive(pid)) process.kill(-pid, 'SIGKILL');
  await t.drop();
  await rm(dir, { recursive: true, force: true });
});

function replicas(): { a: Engine; b: Engine } {
  const a = createEngine(t.db, TICK, {}, 'replica-a');
  const b = createEngine(t.db, new Date(TICK.getTime() + SKEW_MS), {}, 'replica-b');
  return { a, b };
}

/** B, alive while A stalls: A's lease runs out on B's clock, B fails the run as "worker lost" and retries the tick. */
async function takeOver(b: Engine): Promise<void> {
  b.clock.advance(RUN_LEASE_MS + 5_000);
  expect(await checkFreshness(b.deps)).toBe(true);
  await b.drain();
}

const nightly = (name: string, overrides: Parameters<typeof makeWorkflow>[1] = {}): Promise<Workflow> =>
  makeWorkflow(t.db, { name, cron: '0 2 * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true' }), ...overrides });

/** The attempts of one workflow an engine launched (the database is shared by every test of the file). */
const launchedOf = (e: Engine, wf: Workflow) => e.launcher.launched.filter((l) => l.workflow.id === wf.id).map((l) => l.attempt);

const runsOf = (workflowId: number) =>
  t.db.selectFrom('runs').select(['attempt', 'status', 'leaseOwner', 'error']).where('workflowId', '=', workflowId).orderBy('id').execute();

describe('a replica stalled past its lease', () => {
  it('does not launch a tick it committed before the stall once another replica has failed it and launched the retry', async () => {
    const wf = await nightly('nightly-tick', { nextTickAt: TICK });
    const { a, b } = replicas();
    b.launcher.script(wf.id, 'hold');
    const point = stallPoint();
    const firing = fireDueTicks({ ...a.deps, db: stallingAfterFirstCommit(a.deps.db, point.stall) });
    await point.reached;
    expect(await runsOf(wf.id)).toEqual([{ attempt: 1, status: 'running', leaseOwner: 'replica-a', error: null }]);

    await takeOver(b);
    expect(launchedOf(b, wf)).toEqual([2]);

    point.release();
    await firing;
    // A wakes with the tick in its launch queue: the row is no longer its own, so nothing starts.
    expect(launchedOf(a, wf)).toEqual([]);
    expect(await runsOf(wf.id)).toEqual([
      { attempt: 1, status: 'pending_retry', leaseOwner: null, error: WORKER_LOST },
      { attempt: 2, status: 'running', leaseOwner: 'replica-b', error: null },
    ]);
    // Nor does either scheduler fire the tick again.
    await fireDueTicks(b.deps);
    expect(await runsOf(wf.id)).toHaveLength(2);
  });

  it('does not launch a retry it decided before the stall once another replica has failed it and launched the next one', async () => {
    const wf = await nightly('nightly-retry');
    const { a, b } = replicas();
    await fireTick(b, wf, TICK, { status: 'failed', error: 'connection reset' });
    b.launcher.script(wf.id, 'hold');
    const point = stallPoint();
    // A's poller claims the failure and commits attempt 2, leased to itself; then it stalls before launching it.
    const polling = pollFinishedRuns({ ...a.deps, db: stallingAfterFirstCommit(a.deps.db, point.stall) });
    await point.reached;
    expect((await runsOf(wf.id)).map((r) => [r.attempt, r.status, r.leaseOwner])).toEqual([
      [1, 'pending_retry', null],
      [2, 'running', 'replica-a'],
    ]);

    await takeOver(b);
    expect(launchedOf(b, wf)).toEqual([1, 3]);

    point.release();
    await polling;
    expect(launchedOf(a, wf)).toEqual([]);
    expect((await runsOf(wf.id)).map((r) => [r.attempt, r.status, r.leaseOwner])).toEqual([
      [1, 'pending_retry', null],
      [2, 'failed', null],
      [3, 'running', 'replica-b'],
    ]);
  });

  it('ends a command it was supervising when it finds, on waking, that the run was failed as "worker lost" meanwhile', async () => {
    const pidFile = join(dir, 'pid');
    const wf = await nightly('nightly-command', { launcher: JSON.stringify({ kind: 'command', command: `echo $$ > ${pidFile}; exec sleep 60` }) });
    const { a, b } = replicas();
    const held = new HeldRuns();
    const launcher = createCommandLauncher(a.deps, held, { killGraceMs: 200 });
    const deps = { ...a.deps, launchers: () => launcher };
    const run = await t.db.transaction().execute((trx) => insertRunningRun(trx, { workflow: wf, tick: TICK, trigger: 'schedule', timeoutSeconds: 3600, leaseOwner: 'replica-a' }, a.clock.now()));
    await launchRun(deps, run!, wf, { id: 'acme', name: 'acme' }, 3600);
    const pid = await eventually(async () => Number((await readFile(pidFile, 'utf8').catch(() => '')).trim()));
    pids.push(pid);

    // A stalls (its renewals do not happen); B fails the run when the lease has run out on its clock.
    b.clock.advance(RUN_LEASE_MS + 5_000);
    expect(await checkFreshness(b.deps)).toBe(true);

    // A wakes: its first renewal finds the row no longer its own and ends the command rather than let it run on
    // beside the attempt B's retry engine launches.
    a.clock.advance(RUN_LEASE_MS + 10_000);
    await leaseRenewalLoop(a.deps, held).tick();
    await eventually(() => !isAlive(pid));
    await eventually(() => held.list().length === 0);
    // Its outcome (killed by a signal) changes nothing: the row keeps B's verdict.
    const row = await t.db.selectFrom('runs').select(['status', 'error', 'leaseOwner']).where('id', '=', run!.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'failed', error: WORKER_LOST, leaseOwner: null });
  });

  it('sends no http launch request for a run that stopped being its own before the request', async () => {
    const wf = await nightly('nightly-http', { launcher: JSON.stringify({ kind: 'http', url: 'http://127.0.0.1:9/jobs/run', secret: 'launcher-secret-0123456789' }) });
    const a = createEngine(t.db, TICK, { HTTP_LAUNCHER_ALLOWED_HOSTS: '127.0.0.1' }, 'replica-a');
    const held = new HeldRuns();
    const launcher = createHttpLauncher(a.deps, held);
    // launchRun looked and found the row its own; then (a stall on the allow-list read) B failed it as "worker lost".
    const run = await t.db.transaction().execute((trx) => insertRunningRun(trx, { workflow: wf, tick: TICK, trigger: 'schedule', timeoutSeconds: 3600, leaseOwner: 'replica-a' }, a.clock.now()));
    await t.db.updateTable('runs').set({ status: 'failed', error: WORKER_LOST, leaseOwner: null, leaseExpiresAt: null }).where('id', '=', run!.id).execute();
    const outcome = await launcher.launch({ runId: run!.id, workflow: wf, tenant: { id: 'acme', name: 'acme' }, tick: TICK, attempt: 1, trigger: 'schedule', timeoutSeconds: 3600 });
    expect(outcome).toEqual({ started: false, error: "the run ended or became another replica's before it was sent" });
    expect(held.list()).toEqual([]);
  });
});

describe('replicas whose clocks disagree', () => {
  it('fire each tick of an every-minute workflow once, none skipped, with their clocks 10 s apart', async () => {
    const wf = await makeWorkflow(t.db, { name: 'every-minute', cron: '* * * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true' }), nextTickAt: TICK });
    // A runs 5 s fast, B 5 s slow; they look in turn every 20 s of real time, for ten minutes.
    const ahead = createEngine(t.db, new Date(TICK.getTime() + 5_000), {}, 'replica-ahead');
    const behind = createEngine(t.db, new Date(TICK.getTime() - 5_000), {}, 'replica-behind');
    for (let step = 0; step < 30; step++) {
      for (const e of step % 2 ? [behind, ahead] : [ahead, behind]) await fireDueTicks(e.deps);
      ahead.clock.advance(20_000);
      behind.clock.advance(20_000);
    }
    const rows = await t.db.selectFrom('runs').select(['tick', 'status']).where('workflowId', '=', wf.id).orderBy('tick').execute();
    expect(rows.map((r) => r.tick!.toISOString())).toEqual(Array.from({ length: 10 }, (_, i) => new Date(TICK.getTime() + i * 60_000).toISOString()));
    expect(rows.every((r) => r.status === 'succeeded')).toBe(true);
    // Each launched once, by whichever replica's clock said it was due first (the fast one, here).
    expect([...launchedOf(ahead, wf), ...launchedOf(behind, wf)]).toHaveLength(10);
  });
});

describe('a commit whose answer is lost', () => {
  it('the tick is launched at the scheduler\'s next pass, not failed as "worker lost" a lease later', async () => {
    const wf = await nightly('nightly-lost-commit', { nextTickAt: TICK });
    const { a } = replicas();
    await expect(fireDueTicks({ ...a.deps, db: losingFirstCommitAnswer(a.deps.db) })).rejects.toThrow(/Connection terminated/);
    expect(await runsOf(wf.id)).toEqual([{ attempt: 1, status: 'running', leaseOwner: 'replica-a', error: null }]);
    expect(launchedOf(a, wf)).toEqual([]);
    a.clock.advance(2_000);
    await fireDueTicks(a.deps);
    expect(launchedOf(a, wf)).toEqual([1]);
    expect(await runsOf(wf.id)).toEqual([{ attempt: 1, status: 'succeeded', leaseOwner: null, error: null }]);
  });

  it('Run now is launched once, at once, when its row committed; a second click is told it is running', async () => {
    const wf = await nightly('nightly-lost-run-now');
    const { a } = replicas();
    a.launcher.script(wf.id, 'hold');
    const input = { workflowId: wf.id, actor: { user: 'U1' }, scope: {} };
    const first = await requestRunNow({ ...a.deps, db: losingFirstCommitAnswer(a.deps.db) }, input);
    expect(first.kind).toBe('started');
    expect(launchedOf(a, wf)).toEqual([1]);
    expect(await runsOf(wf.id)).toEqual([{ attempt: 1, status: 'running', leaseOwner: 'replica-a', error: null }]);
    const again = await requestRunNow(a.deps, input);
    expect(again.kind).toBe('already_running');
    expect(launchedOf(a, wf)).toEqual([1]);
  });

  it('the retry is launched at the poller\'s next pass', async () => {
    const wf = await nightly('nightly-lost-retry-commit');
    const { a } = replicas();
    await fireTick(a, wf, TICK, { status: 'failed', error: 'connection reset' });
    a.launcher.script(wf.id, 'hold');
    await expect(pollFinishedRuns({ ...a.deps, db: losingFirstCommitAnswer(a.deps.db) })).rejects.toThrow(/Connection terminated/);
    expect((await runsOf(wf.id)).map((r) => [r.attempt, r.status, r.leaseOwner])).toEqual([
      [1, 'pending_retry', null],
      [2, 'running', 'replica-a'],
    ]);
    expect(launchedOf(a, wf)).toEqual([1]);
    await pollFinishedRuns(a.deps);
    expect(launchedOf(a, wf)).toEqual([1, 2]);
    // Once: the next pass has nothing left to launch.
    await pollFinishedRuns(a.deps);
    expect(launchedOf(a, wf)).toEqual([1, 2]);
  });
});
