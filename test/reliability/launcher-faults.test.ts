import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { checkFreshness } from '../../src/engine/freshness.js';
import { createCommandLauncher } from '../../src/launch/command-launcher.js';
import { createHttpLauncher } from '../../src/launch/http-launcher.js';
import { HeldRuns } from '../../src/ledger/run-leases.js';
import type { Launcher } from '../../src/launcher.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeRun, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { startHttpTarget } from '../helpers/http-target.js';
import { eventually, finishedRun, isAlive, replicaDeps } from '../runs/support.js';

/**
 * Launcher faults: whatever the job or the target does, the run ends failed
 * with an error that says what happened, within its timeout, and nothing it
 * started is left running.
 */

let t: TestDatabase;
let dir: string;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
const clock = new ManualClock('2026-03-10T02:00:00Z');

beforeAll(async () => {
  t = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'sb-launcher-faults-'));
  target = await startHttpTarget();
  await makeTenant(t.db);
});
afterAll(async () => {
  await target.stop();
  await t.drop();
  await rm(dir, { recursive: true, force: true });
});

/** Every process of a group gone (zombies waiting for a reaper count as gone). */
function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return true;
  }
  return !isAlive(pgid);
}

async function start(launcher: Launcher, launcherConfig: Record<string, unknown>, timeoutSeconds: number) {
  const workflow = await makeWorkflow(t.db, { mode: 'managed', launcher: JSON.stringify(launcherConfig) });
  const run = await makeRun(t.db, { workflowId: workflow.id, tick: at('2026-03-10T02:00:00Z'), status: 'running', finishedAt: null, deadlineAt: new Date(clock.now().getTime() + timeoutSeconds * 1000) });
  const outcome = await launcher.launch({ runId: run.id, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: run.tick, attempt: 1, trigger: 'schedule', timeoutSeconds });
  return { run, outcome };
}

/** Pids a command wrote to its pid file: the shell's own first, then what it started. */
async function pidsOf(file: string, count: number): Promise<number[]> {
  const text = await eventually(async () => {
    const t = await readFile(file, 'utf8').catch(() => '');
    return t.trim().split('\n').filter(Boolean).length >= count && t;
  });
  return text.trim().split('\n').map(Number);
}

describe('command launcher faults', () => {
  const command = (held = new HeldRuns()) => createCommandLauncher(replicaDeps(t.db, clock), held, { killGraceMs: 300, drainMs: 200 });

  it('a command that hangs is failed at its timeout and its whole group is gone', async () => {
    const pids = join(dir, 'hang');
    const { run } = await start(command(), { kind: 'command', command: `echo $$ > ${pids}; sleep 300 & echo $! >> ${pids}; trap '' TERM; wait` }, 0.5);
    const [shell, child] = await pidsOf(pids, 2);
    const done = await finishedRun(t.db, run.id);
    expect(done).toMatchObject({ status: 'failed', error: 'timed out after 0.5s (process group terminated)' });
    expect(done.finishedAt).not.toBeNull();
    await eventually(() => groupGone(shell!), 2000);
    expect(isAlive(child!)).toBe(false);
  });

  it('a command that exits but leaves children running is failed, and the children are ended', async () => {
    const pids = join(dir, 'strays');
    const { run } = await start(
      command(),
      { kind: 'command', command: `echo $$ > ${pids}; sh -c 'trap "" TERM; sleep 300' >/dev/null 2>&1 & echo $! >> ${pids}; sleep 300 & echo $! >> ${pids}; echo done` },
      30,
    );
    const [shell, stubborn, plain] = await pidsOf(pids, 3);
    const done = await finishedRun(t.db, run.id);
    expect(done).toMatchObject({ status: 'failed', exitCode: 0 });
    expect(done.error).toBe('exited with code 0 but left processes running in its group; they were terminated');
    await eventually(() => groupGone(shell!), 2000);
    expect(isAlive(stubborn!)).toBe(false);
    expect(isAlive(plain!)).toBe(false);
  });

  it('a command that starts a daemon in a session of its own, still holding its output, and exits 0: succeeded, not waited for', async () => {
    const pids = join(dir, 'daemon');
    // setsid: the daemon leaves the command's group (out of the launcher's reach) but keeps stdout open.
    const { run } = await start(command(), { kind: 'command', command: `setsid sh -c 'echo $$ > ${pids}; echo daemon up; exec sleep 300' & sleep 0.1; echo started` }, 30);
    const [daemon] = await pidsOf(pids, 1);
    try {
      const done = await finishedRun(t.db, run.id);
      expect(done).toMatchObject({ status: 'succeeded', exitCode: 0 });
      expect(done.logExcerpt).toContain('started');
      expect(isAlive(daemon!)).toBe(true);
    } finally {
      process.kill(daemon!, 'SIGKILL');
    }
  });

  it('a command printing megabytes of binary (NULs included) keeps a storable tail and fails with its exit code', async () => {
    const { run } = await start(command(), { kind: 'command', command: 'head -c 6000000 /dev/zero; printf "\\0\\0\\nlast words\\n" >&2; exit 4' }, 30);
    const done = await finishedRun(t.db, run.id);
    expect(done).toMatchObject({ status: 'failed', exitCode: 4 });
    expect(done.error).toBe('exited with code 4: last words');
    expect(done.logExcerpt!.length).toBeLessThan(9 * 1024);
    expect(done.logExcerpt).toMatch(/^\[… \d+ earlier bytes not kept\]/);
    expect(done.logExcerpt).not.toContain('\u0000');
  });

  it("a command's error line is what a terminal shows of its last readable line: no colours, no control characters, no binary", async () => {
    const { run } = await start(command(), { kind: 'command', command: "printf 'Error: \\033[31mdisk full\\033[0m\\a\\n'; head -c 200 /dev/zero | tr '\\0' '\\377'; exit 1" }, 30);
    expect(await finishedRun(t.db, run.id)).toMatchObject({ status: 'failed', exitCode: 1, error: 'exited with code 1: Error: disk full' });
    const progress = await start(command(), { kind: 'command', command: "printf 'upload 10%%\\rupload 90%%\\rupload failed: 403\\r\\n'; exit 2" }, 30);
    expect(await finishedRun(t.db, progress.run.id)).toMatchObject({ status: 'failed', error: 'exited with code 2: upload failed: 403' });
  });

  it('a command ignoring TERM past its deadline is ended by its own supervisor, not failed under it while it still runs', async () => {
    const pids = join(dir, 'deadline');
    const { run } = await start(command(), { kind: 'command', command: `echo $$ > ${pids}; trap '' TERM; echo "stuck on batch 7"; sleep 300 & echo $! >> ${pids}; wait` }, 2);
    const [shell, child] = await pidsOf(pids, 2);
    const row = await t.db.selectFrom('runs').select(['deadlineAt', 'leaseOwner']).where('id', '=', run.id).executeTakeFirstOrThrow();
    expect(row.leaseOwner).not.toBeNull();
    // Another replica's freshness pass at the deadline, while this replica's watchdog is about to end the group.
    await checkFreshness({ db: t.db, clock: new ManualClock(row.deadlineAt!) });
    const done = await finishedRun(t.db, run.id);
    // One story, the supervisor's: its error (one error group whichever replica looks first) and the output tail,
    // recorded once the group is gone, so a retry never starts beside the attempt it replaces.
    expect(done).toMatchObject({ status: 'failed', error: 'timed out after 2s (process group terminated)' });
    expect(done.logExcerpt).toContain('stuck on batch 7');
    expect(isAlive(shell!)).toBe(false);
    expect(isAlive(child!)).toBe(false);
  });

  it('a command killed by a signal is failed naming the signal', async () => {
    const { run } = await start(command(), { kind: 'command', command: 'echo about to go; kill -KILL $$' }, 30);
    const done = await finishedRun(t.db, run.id);
    expect(done).toMatchObject({ status: 'failed', exitCode: null, error: 'killed by SIGKILL: about to go' });
    const segv = await start(command(), { kind: 'command', command: 'kill -SEGV $$' }, 30);
    expect(await finishedRun(t.db, segv.run.id)).toMatchObject({ status: 'failed', error: 'killed by SIGSEGV' });
  });

  it("a command killed by a signal behind the shell (its 128 + N exit code) is failed naming the signal too", async () => {
    // Not the shell's last command, so the shell forks it, sees it die, prints "Segmentation fault" and exits 139.
    const { run } = await start(command(), { kind: 'command', command: "sh -c 'kill -SEGV $$'; exit $?" }, 30);
    const done = await finishedRun(t.db, run.id);
    expect(done).toMatchObject({ status: 'failed', exitCode: 139 });
    expect(done.error).toMatch(/^killed by SIGSEGV \(exit code 139\)(: .*Segmentation fault.*)?$/);
  });
});

/** A tenant's launcher (no operator mark) signs with a secret of its own. */
const HTTP_SECRET = 'launcher-faults-own-secret-0123';

describe('http launcher faults', () => {
  const http = (acceptTimeoutMs?: number) =>
    createHttpLauncher(replicaDeps(t.db, clock, { LAUNCHER_SECRET: 'launcher-faults-secret-0123', PUBLIC_URL: 'https://bot.example.com', HTTP_LAUNCHER_ALLOWED_HOSTS: '127.0.0.1' }), new HeldRuns(), { acceptTimeoutMs });

  it('a sync target that hangs: failed at the run timeout', async () => {
    target.respondWith(() => ({ status: 200, delayMs: 5_000 }));
    const { run } = await start(http(), { kind: 'http', url: `${target.url}/hang`, mode: 'sync', secret: HTTP_SECRET }, 1);
    expect(await finishedRun(t.db, run.id)).toMatchObject({ status: 'failed', error: 'timed out after 1s' });
  });

  it('a target answering 500: failed with the status and the first line of its answer', async () => {
    target.respondWith(() => ({ status: 500, body: 'upstream exploded\nstack…' }));
    const { run } = await start(http(), { kind: 'http', url: `${target.url}/boom`, mode: 'sync', secret: HTTP_SECRET }, 10);
    expect(await finishedRun(t.db, run.id)).toMatchObject({ status: 'failed', error: 'HTTP 500: upstream exploded', logExcerpt: 'upstream exploded\nstack…' });
  });

  it('a target answering a redirect: failed naming where it points and that it was not followed, the query left out', async () => {
    target.respondWith(() => ({ status: 301, headers: { location: 'https://jobs.example.com/v2/run?sig=abc#x' } }));
    const { run } = await start(http(), { kind: 'http', url: `${target.url}/moved`, mode: 'sync', secret: HTTP_SECRET }, 10);
    expect(await finishedRun(t.db, run.id)).toMatchObject({
      status: 'failed',
      error: 'HTTP 301: redirect to https://jobs.example.com/v2/run not followed (launchers never follow redirects: set the url to where it points; permanent: not retried)',
    });
    target.respondWith(() => ({ status: 302, headers: { location: '/login' }, body: '<html>\x1b[31mgo away</html>' }));
    const relative = await start(http(), { kind: 'http', url: `${target.url}/old`, mode: 'callback', secret: HTTP_SECRET }, 10);
    expect((await finishedRun(t.db, relative.run.id)).error).toBe(`HTTP 302: redirect to ${target.url}/login not followed (launchers never follow redirects: set the url to where it points; permanent: not retried)`);
  });

  it("a failed answer's first line is read as a terminal shows it: no control characters in the error", async () => {
    target.respondWith(() => ({ status: 503, body: '\r\n\x1b[1mBackend\x1b[0m\tdown\x07\r\nretry later' }));
    const { run } = await start(http(), { kind: 'http', url: `${target.url}/busy`, mode: 'sync', secret: HTTP_SECRET }, 10);
    expect(await finishedRun(t.db, run.id)).toMatchObject({ status: 'failed', error: 'HTTP 503: Backend down' });
  });

  it('a target nobody listens on: failed with the connection error', async () => {
    const closed = await startHttpTarget();
    await closed.stop();
    const { run } = await start(http(), { kind: 'http', url: `${closed.url}/nothing`, mode: 'sync', secret: HTTP_SECRET }, 10);
    const done = await finishedRun(t.db, run.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/^request failed: .*ECONNREFUSED/);
  });

  it('a callback target that never accepts: failed at the accept timeout', async () => {
    target.respondWith(() => ({ status: 202, delayMs: 5_000 }));
    const { run } = await start(http(1000), { kind: 'http', url: `${target.url}/slow-accept`, mode: 'callback', secret: HTTP_SECRET }, 60);
    expect(await finishedRun(t.db, run.id)).toMatchObject({ status: 'failed', error: 'timed out after 1s' });
  });

  it('a callback target that answers 202 at once but never ends its answer has accepted: the run waits for its callback', async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(202, { 'content-type': 'text/plain' });
        res.write('accepted, streaming progress…\n');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const port = (server.address() as { port: number }).port;
      const { run } = await start(http(1000), { kind: 'http', url: `http://127.0.0.1:${port}/accept-and-stream`, mode: 'callback', secret: HTTP_SECRET }, 120);
      // Accepted: the lease is handed back and the run stays running for its callback (not failed "timed out after 1s").
      await eventually(async () => (await t.db.selectFrom('runs').select('leaseOwner').where('id', '=', run.id).executeTakeFirstOrThrow()).leaseOwner === null);
      expect((await t.db.selectFrom('runs').select(['status', 'error']).where('id', '=', run.id).executeTakeFirstOrThrow())).toEqual({ status: 'running', error: null });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('a callback target that accepts and never calls back: failed "timed out" at the deadline, by whichever replica looks', async () => {
    target.respondWith(() => ({ status: 202 }));
    const { run } = await start(http(), { kind: 'http', url: `${target.url}/accept`, mode: 'callback', secret: HTTP_SECRET }, 120);
    // Accepted: the lease is handed back, so only the deadline can end it.
    await eventually(async () => (await t.db.selectFrom('runs').select('leaseOwner').where('id', '=', run.id).executeTakeFirstOrThrow()).leaseOwner === null);
    await checkFreshness({ db: t.db, clock });
    expect((await t.db.selectFrom('runs').select('status').where('id', '=', run.id).executeTakeFirstOrThrow()).status).toBe('running');
    clock.advance(120_000);
    await checkFreshness({ db: t.db, clock: new ManualClock(clock.now()) });
    expect(await t.db.selectFrom('runs').selectAll().where('id', '=', run.id).executeTakeFirstOrThrow()).toMatchObject({ status: 'failed', error: 'timed out' });
  });
});
