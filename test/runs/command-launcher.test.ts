import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { Workflow } from '../../src/db/schema.js';
import { createCommandLauncher } from '../../src/launch/command-launcher.js';
import { HeldRuns, renewRunLeases } from '../../src/ledger/run-leases.js';
import { fireDueTicks } from '../../src/engine/tick-scheduler.js';
import { RUN_LEASE_MS } from '../../src/ledger/runs.js';
import { rememberSecrets } from '../../src/secrets.js';
import { REDACTED } from '../../src/domain/redact.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeRun, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { eventually, finishedRun, isAlive, replicaDeps } from './support.js';

let t: TestDatabase;
let dir: string;
const clock = new ManualClock('2026-03-10T02:00:00Z');
beforeAll(async () => {
  t = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'sb-command-'));
  await makeTenant(t.db);
});
afterAll(async () => {
  await t.drop();
  await rm(dir, { recursive: true, force: true });
});

async function launch(command: string, options: { timeoutSeconds?: number; killGraceMs?: number; tailBytes?: number; env?: Record<string, string> } = {}) {
  const deps = replicaDeps(t.db, clock);
  const held = new HeldRuns();
  const launcher = createCommandLauncher(deps, held, { killGraceMs: options.killGraceMs, tailBytes: options.tailBytes });
  const workflow: Workflow = await makeWorkflow(t.db, { mode: 'managed', launcher: JSON.stringify({ kind: 'command', command, env: options.env }) });
  const run = await makeRun(t.db, { workflowId: workflow.id, tick: at('2026-03-10T02:00:00Z'), status: 'running', finishedAt: null, attempt: 2, trigger: 'retry' });
  const outcome = await launcher.launch({ runId: run.id, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: run.tick, attempt: 2, trigger: 'retry', timeoutSeconds: options.timeoutSeconds ?? 30 });
  return { outcome, run, held, deps, workflow };
}

describe('command launcher', () => {
  it('runs the command with the run in its environment and records success with the output', async () => {
    // The stored launcher's env names come back exactly as written (JSON keys are data, not column names).
    const { outcome, run } = await launch('echo "$RUN_ID $WORKFLOW $TENANT $TICK $ATTEMPT $TRIGGER $EXTRA_SETTING"; echo "token:${API_TOKEN:-unset}" >&2', {
      env: { EXTRA_SETTING: 'from-config' },
    });
    expect(outcome).toEqual({ started: true });
    const done = await finishedRun(t.db, run.id);
    const wf = await t.db.selectFrom('workflows').select('name').where('id', '=', run.workflowId).executeTakeFirstOrThrow();
    expect(done).toMatchObject({ status: 'succeeded', attemptStatus: 'succeeded', exitCode: 0, leaseOwner: null });
    expect(done.logExcerpt).toBe(`${run.id} ${wf.name} acme 2026-03-10T02:00:00.000Z 2 retry from-config\ntoken:unset\n`);
  });

  it("passes on none of the bot's own environment (its tokens, its database URL) but what the operator gives in launcher.env", async () => {
    const bots = { SLACK_BOT_TOKEN: 'xoxb-env-leak-0123456789', API_TOKEN: 'api-env-leak-0123456789', DATABASE_URL: 'postgres://bot:pw@db/prod', SOME_OTHER: 'x' };
    const saved = Object.fromEntries(Object.keys(bots).map((k) => [k, process.env[k]]));
    Object.assign(process.env, bots);
    try {
      const { run } = await launch('env | cut -d= -f1 | sort | tr "\\n" " "; echo; echo "db=${DATABASE_URL:-none}"', { env: { DATABASE_URL: 'postgres://job@db/etl' } });
      const done = await finishedRun(t.db, run.id);
      const [names, db] = done.logExcerpt!.trim().split('\n');
      const seen = names!.trim().split(' ');
      for (const k of ['SLACK_BOT_TOKEN', 'API_TOKEN', 'SOME_OTHER']) expect(seen).not.toContain(k);
      expect(seen).toEqual(expect.arrayContaining(['PATH', 'RUN_ID', 'WORKFLOW', 'TENANT', 'TICK', 'ATTEMPT', 'TRIGGER']));
      // The operator asked for a database URL of the job's own: that one, not the bot's.
      expect(db).toBe('db=postgres://job@db/etl');
    } finally {
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it('fails on a non-zero exit with the code and the last line printed', async () => {
    const { run } = await launch('echo starting; echo "psql: connection refused" >&2; exit 3');
    const done = await finishedRun(t.db, run.id);
    expect(done).toMatchObject({ status: 'failed', exitCode: 3, error: 'exited with code 3: psql: connection refused' });
  });

  it('keeps only the tail of a command that prints megabytes', async () => {
    const { run } = await launch('head -c 5000000 /dev/zero | tr "\\0" "x"; echo; echo THE-END', { tailBytes: 4096 });
    const done = await finishedRun(t.db, run.id);
    expect(done.status).toBe('succeeded');
    expect(done.logExcerpt!.endsWith('x\nTHE-END\n')).toBe(true);
    expect(done.logExcerpt).toMatch(/^\[… \d+ earlier bytes not kept\]\n/);
    expect(done.logExcerpt!.length).toBeLessThan(4096 + 64);
  });

  it('kills the whole process group at the timeout, including children that ignore TERM, and fails the run', async () => {
    const pids = join(dir, 'pids');
    // A background child that ignores TERM (only KILL ends it), and a foreground sleep.
    const { run } = await launch(`sh -c 'trap "" TERM; sleep 300' & echo $! > ${pids}; echo "$$" >> ${pids}; sleep 300`, {
      timeoutSeconds: 0.3,
      killGraceMs: 300,
    });
    const written = await eventually(async () => {
      const text = await readFile(pids, 'utf8').catch(() => '');
      return text.trim().split('\n').length === 2 && text;
    });
    const [child, shell] = written.trim().split('\n').map(Number);
    const done = await finishedRun(t.db, run.id);
    expect(done).toMatchObject({ status: 'failed', error: 'timed out after 0.3s (process group terminated)' });
    expect(isAlive(shell!)).toBe(false);
    expect(isAlive(child!)).toBe(false);
  });

  it('a command ended at its timeout keeps the tail of what it printed, secrets redacted', async () => {
    const secret = 'tok-timeout-0123456789abcdef';
    rememberSecrets([secret]);
    const { run } = await launch(`echo "connecting with ${secret}"; echo waiting; sleep 300`, { timeoutSeconds: 0.5, killGraceMs: 200 });
    const done = await finishedRun(t.db, run.id);
    expect(done).toMatchObject({ status: 'failed', error: 'timed out after 0.5s (process group terminated)' });
    expect(done.logExcerpt).toBe(`connecting with ${REDACTED}\nwaiting\n`);
  });

  it('refuses to start when the command cannot be spawned, naming the working directory at fault (not "/bin/sh ENOENT")', async () => {
    const deps = replicaDeps(t.db, clock);
    const launcher = createCommandLauncher(deps, new HeldRuns());
    const launchIn = async (cwd: string) => {
      const workflow = await makeWorkflow(t.db, { mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true', cwd }) });
      return launcher.launch({ runId: 1, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: null, attempt: 1, trigger: 'manual', timeoutSeconds: 5 });
    };
    const missing = join(dir, 'nope');
    expect(await launchIn(missing)).toEqual({ started: false, refusal: { kind: 'cannot_start', reason: `working directory ${missing} does not exist (spawn /bin/sh ENOENT)` } });
    // A file where the directory should be is thrown by spawn, not emitted: still a refused start, not a crash.
    const file = join(dir, 'a-file');
    await writeFile(file, '');
    expect(await launchIn(file)).toEqual({ started: false, refusal: { kind: 'cannot_start', reason: `working directory ${file} is not a directory (spawn ENOTDIR)` } });
  });

  it('holds the lease of a run it supervises while the command runs, and lets it go when it ends', async () => {
    const gate = join(dir, 'gate');
    const { run, held, deps } = await launch(`while [ ! -e ${gate} ]; do sleep 0.05; done`);
    await eventually(() => held.list().includes(run.id));
    const leased = await t.db.selectFrom('runs').select(['leaseOwner', 'leaseExpiresAt']).where('id', '=', run.id).executeTakeFirstOrThrow();
    expect(leased).toEqual({ leaseOwner: deps.replicaId, leaseExpiresAt: new Date(clock.now().getTime() + RUN_LEASE_MS) });
    // Renewal extends it from the clock's now; another replica's renewal does not touch it.
    const later = new Date(clock.now().getTime() + 30_000);
    expect(await renewRunLeases(deps, held.list(), later)).toBe(1);
    expect(await renewRunLeases({ ...deps, replicaId: 'someone-else' }, [run.id], later)).toBe(0);
    const renewed = await t.db.selectFrom('runs').select(['leaseOwner', 'leaseExpiresAt']).where('id', '=', run.id).executeTakeFirstOrThrow();
    expect(renewed).toEqual({ leaseOwner: deps.replicaId, leaseExpiresAt: new Date(later.getTime() + RUN_LEASE_MS) });
    await (await import('node:fs/promises')).writeFile(gate, '');
    await finishedRun(t.db, run.id);
    await eventually(() => !held.list().includes(run.id));
  });

  it('through the scheduler: a command outliving its profile timeout is failed as timed out', async () => {
    const c = new ManualClock('2026-03-10T03:00:00Z');
    const wf = await makeWorkflow(t.db, {
      cron: '0 * * * *',
      mode: 'managed',
      launcher: JSON.stringify({ kind: 'command', command: 'sleep 30' }),
      policy: JSON.stringify({ timeoutSeconds: 1 }),
      nextTickAt: at('2026-03-10T03:00:00Z'),
    });
    await fireDueTicks(replicaDeps(t.db, c));
    const [row] = await t.db.selectFrom('runs').selectAll().where('workflowId', '=', wf.id).execute();
    expect(row!.deadlineAt).toEqual(at('2026-03-10T03:00:01Z'));
    const done = await finishedRun(t.db, row!.id);
    expect(done).toMatchObject({ status: 'failed', error: 'timed out after 1s (process group terminated)' });
  });
});
