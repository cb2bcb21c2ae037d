import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createCommandLauncher } from '../../src/launch/command-launcher.js';
import { HeldRuns } from '../../src/ledger/run-leases.js';
import { SHUTTING_DOWN } from '../../src/launch/in-flight.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeRun, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { eventually, finishedRun, isAlive, replicaDeps } from './support.js';

let t: TestDatabase;
let dir: string;
const clock = new ManualClock('2026-03-10T02:00:00Z');
beforeAll(async () => {
  t = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'sb-shutdown-'));
  await makeTenant(t.db);
});
afterAll(async () => {
  await t.drop();
  await rm(dir, { recursive: true, force: true });
});

async function start(launcher: ReturnType<typeof createCommandLauncher>, command: string) {
  const workflow = await makeWorkflow(t.db, { mode: 'managed', launcher: JSON.stringify({ kind: 'command', command }) });
  const run = await makeRun(t.db, { workflowId: workflow.id, tick: at('2026-03-10T02:00:00Z'), status: 'running', finishedAt: null });
  await launcher.launch({ runId: run.id, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: run.tick, attempt: 1, trigger: 'schedule', timeoutSeconds: 300 });
  return run;
}

describe('a replica shutting down', () => {
  it('lets commands that finish within the grace finish normally', async () => {
    const launcher = createCommandLauncher(replicaDeps(t.db, clock), new HeldRuns(), { killGraceMs: 200 });
    const run = await start(launcher, 'sleep 0.2; echo done');
    await launcher.shutdown(5_000);
    expect(await finishedRun(t.db, run.id)).toMatchObject({ status: 'succeeded', logExcerpt: 'done\n' });
  });

  it('ends the process groups of commands still running after the grace and records them interrupted', async () => {
    const launcher = createCommandLauncher(replicaDeps(t.db, clock), new HeldRuns(), { killGraceMs: 200 });
    const pids = join(dir, 'pids');
    const run = await start(launcher, `sh -c 'trap "" TERM; sleep 300' & echo $! > ${pids}; sleep 300`);
    const child = Number(await eventually(async () => (await readFile(pids, 'utf8').catch(() => '')).trim()));
    await launcher.shutdown(100);
    const done = await finishedRun(t.db, run.id);
    expect(done).toMatchObject({ status: 'failed', error: 'interrupted: the scheduler-bot replica running it shut down' });
    expect(isAlive(child)).toBe(false);
  });

  it('starts nothing once it has shut down: a launch asked for after its grace (a Run now still being answered) is refused, saying why', async () => {
    const launcher = createCommandLauncher(replicaDeps(t.db, clock), new HeldRuns(), { killGraceMs: 200 });
    const marker = join(dir, 'ran-after-shutdown');
    await launcher.shutdown(1_000);
    const workflow = await makeWorkflow(t.db, { mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: `touch ${marker}` }) });
    const outcome = await launcher.launch({ runId: 1, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: null, attempt: 1, trigger: 'manual', timeoutSeconds: 30 });
    expect(outcome).toEqual({ started: false, error: SHUTTING_DOWN });
    expect(await readFile(marker).then(() => true, () => false)).toBe(false);
  });
});
