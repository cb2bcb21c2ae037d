import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createCommandLauncher } from '../../src/launch/command-launcher.js';
import { HeldRuns } from '../../src/ledger/run-leases.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeRun, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { eventually, finishedRun, isAlive, replicaDeps } from './support.js';

/**
 * A replica that dies (kill -9, OOM) while its command runs: the command must
 * die with it. Otherwise, once the run's lease runs out, another replica
 * fails it as "worker lost" and its retry engine launches the next attempt
 * beside a first one still running.
 */

let t: TestDatabase;
let dir: string;
const strays: number[] = [];
beforeAll(async () => {
  t = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'sb-orphan-'));
  await makeTenant(t.db);
});
afterAll(async () => {
  for (const pid of strays) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await t.drop();
  await rm(dir, { recursive: true, force: true });
});

/** Processes whose command line carries the guard's name and the given group: guards still waiting. */
async function guardsOf(pgid: number): Promise<number[]> {
  const found: number[] = [];
  for (const name of (await readdir('/proc')).filter((n) => /^\d+$/.test(n))) {
    const args = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    const parts = args.split('\0');
    if (parts.includes('scheduler-bot-guard') && parts.includes(String(pgid)) && isAlive(Number(name))) found.push(Number(name));
  }
  return found;
}

describe('a command whose replica dies', () => {
  it('is ended with its whole process group when the replica is killed outright', async () => {
    const pids = join(dir, 'pids');
    // The "replica": a process of its own running the real command launcher (no database: the lease write fails and is only logged).
    const script = `
      const { createCommandLauncher } = await import('./src/launch/command-launcher.ts');
      const { HeldRuns } = await import('./src/ledger/run-leases.ts');
      const { silentLogger } = await import('./src/log.ts');
      const { systemClock } = await import('./src/clock.ts');
      const deps = { db: {}, clock: systemClock, logger: silentLogger, replicaId: 'doomed', config: {} };
      const launcher = createCommandLauncher(deps, new HeldRuns(), { killGraceMs: 500 });
      const workflow = { id: 1, name: 'nightly', launcher: { kind: 'command', command: ${JSON.stringify(`sleep 300 & echo $! > ${pids}; echo $$ >> ${pids}; wait`)} } };
      const outcome = await launcher.launch({ runId: 1, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: null, attempt: 1, trigger: 'manual', timeoutSeconds: 3600 });
      console.log('LAUNCHED ' + JSON.stringify(outcome));
      setInterval(() => undefined, 1000);
    `;
    const replica = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    replica.stdout.on('data', (c: Buffer) => (out += c.toString()));
    replica.stderr.on('data', (c: Buffer) => (out += c.toString()));
    await eventually(() => out.includes('LAUNCHED'), 30_000).catch(() => expect(out).toContain('LAUNCHED'));
    expect(out).toContain('LAUNCHED {"started":true}');
    const written = await eventually(async () => {
      const text = await readFile(pids, 'utf8').catch(() => '');
      return text.trim().split('\n').length === 2 && text;
    });
    const [child, shell] = written.trim().split('\n').map(Number) as [number, number];
    strays.push(child, shell);
    expect(isAlive(child)).toBe(true);

    replica.kill('SIGKILL');
    await new Promise((r) => replica.once('exit', r));

    await eventually(() => !isAlive(child) && !isAlive(shell), 10_000);
    // The guard leaves once the group is gone.
    await eventually(async () => (await guardsOf(shell)).length === 0);
  }, 60_000);

  it('leaves no guard behind when the command ends normally, and the command ran to its end', async () => {
    const clock = new ManualClock('2026-03-10T02:00:00Z');
    const deps = replicaDeps(t.db, clock);
    const launcher = createCommandLauncher(deps, new HeldRuns());
    const pidFile = join(dir, 'normal-pid');
    const gate = join(dir, 'normal-gate');
    const workflow = await makeWorkflow(t.db, { mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: `echo $$ > ${pidFile}; while [ ! -e ${gate} ]; do sleep 0.05; done; echo done` }) });
    const run = await makeRun(t.db, { workflowId: workflow.id, tick: at('2026-03-10T02:00:00Z'), status: 'running', finishedAt: null });
    expect(await launcher.launch({ runId: run.id, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: run.tick, attempt: 1, trigger: 'schedule', timeoutSeconds: 30 })).toEqual({ started: true });
    const pgid = Number((await eventually(() => readFile(pidFile, 'utf8').catch(() => ''))).trim());
    const guards = await guardsOf(pgid);
    expect(guards).toHaveLength(1);
    // The guard is handed nothing of the bot's environment.
    const environ = await readFile(`/proc/${guards[0]}/environ`, 'utf8');
    expect(environ.split('\0').filter(Boolean).map((v) => v.split('=')[0])).toEqual(['PATH']);
    await writeFile(gate, '');
    expect(await finishedRun(t.db, run.id)).toMatchObject({ status: 'succeeded', logExcerpt: 'done\n' });
    await eventually(async () => (await guardsOf(pgid)).length === 0);
  });
});
