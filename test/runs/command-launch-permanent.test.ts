import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createCommandLauncher } from '../../src/launch/command-launcher.js';
import { HeldRuns } from '../../src/ledger/run-leases.js';
import { fireDueTicks } from '../../src/engine/tick-scheduler.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { replicaDeps, settledRuns } from './support.js';

/**
 * A command that can never start as configured (its working directory, an unknown COMMAND_USER) or that the
 * shell cannot find or run is permanent like an http launch refused before sending (src/domain/spawn-failure.ts):
 * the run fails at once naming the path or user, and its tick gets no retry, whatever its budget. A command
 * failing on its own (exit 1, or 127 from a shell of its own) is retried as usual. End to end: real spawns, the
 * engine's poller and retry engine, a real database.
 */

let t: TestDatabase;
let dir: string;
beforeAll(async () => {
  t = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'sb-permanent-'));
  await makeTenant(t.db);
});
afterAll(async () => {
  await t.drop();
  await rm(dir, { recursive: true, force: true });
});

/** An hourly managed workflow (2 retries a tick) running `launcher`, due at `tick`: its runs once settled. */
async function hourly(launcher: Record<string, unknown>, tick: string, user?: string) {
  const replica = replicaDeps(t.db, new ManualClock(tick));
  const command = user ? createCommandLauncher(replica, new HeldRuns(), { user }) : undefined;
  const deps = command ? { ...replica, launchers: () => command } : replica;
  const wf = await makeWorkflow(t.db, { cron: '0 * * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', ...launcher }), nextTickAt: at(tick) });
  await fireDueTicks(deps);
  return settledRuns(t.db, deps, wf.id);
}

describe('a command that can never start is failed at once, not retried', () => {
  it('a working directory that does not exist: one attempt, the directory named', async () => {
    const missing = join(dir, 'not-mounted');
    const rows = await hourly({ command: 'true', cwd: missing, env: { API_TOKEN: 'job-secret-0123456789' } }, '2026-03-10T03:00:00Z');
    expect(rows.map((r) => [r.attempt, r.status, r.error, r.outcomeNote])).toEqual([
      [1, 'failed', `launch failed: working directory ${missing} does not exist (spawn /bin/sh ENOENT) (permanent: not retried)`, null],
    ]);
  });

  it('a working directory that is a file: one attempt', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, '');
    const rows = await hourly({ command: 'true', cwd: file }, '2026-03-10T04:00:00Z');
    expect(rows.map((r) => [r.attempt, r.status, r.error])).toEqual([
      [1, 'failed', `launch failed: working directory ${file} is not a directory (spawn ENOTDIR) (permanent: not retried)`],
    ]);
  });

  it('a command the shell cannot find (127): one attempt, in the shell\'s words', async () => {
    const rows = await hourly({ command: 'etl-job-that-is-not-installed --all' }, '2026-03-10T05:00:00Z');
    expect(rows.map((r) => [r.attempt, r.status, r.exitCode])).toEqual([[1, 'failed', 127]]);
    expect(rows[0]!.error).toMatch(/^exited with code 127: \/bin\/sh: (line )?1: etl-job-that-is-not-installed: (command )?not found \(permanent: not retried\)$/);
  });

  it('a program that is not executable (126): one attempt', async () => {
    const script = join(dir, 'etl.sh');
    await writeFile(script, 'echo hi\n', { mode: 0o644 });
    const rows = await hourly({ command: script }, '2026-03-10T06:00:00Z');
    expect(rows.map((r) => [r.attempt, r.status, r.exitCode])).toEqual([[1, 'failed', 126]]);
    expect(rows[0]!.error).toBe(`exited with code 126: /bin/sh: 1: ${script}: Permission denied (permanent: not retried)`);
  });

  it('an unknown command user: one attempt, the user named, never run as the bot', async () => {
    // An unknown COMMAND_USER stops a replica at start (src/config/env.ts); a launcher given one anyway refuses every run.
    const rows = await hourly({ command: 'true' }, '2026-03-10T07:00:00Z', 'no-such-user-sb');
    expect(rows.map((r) => [r.attempt, r.status, r.error])).toEqual([
      [1, 'failed', 'launch failed: COMMAND_USER="no-such-user-sb": no such user in /etc/passwd (permanent: not retried)'],
    ]);
  });

  it("a job's own failures are retried per the budget: an exit 1, and a 127 from a nested shell of its own", async () => {
    const own = await hourly({ command: 'echo boom; exit 1' }, '2026-03-10T08:00:00Z');
    expect(own.map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(own[0]).toMatchObject({ status: 'failed', error: 'exited with code 1: boom', outcomeNote: 'failed on all 3 attempts' });
    const nested = await hourly({ command: "sh -c 'missing-tool-sb'" }, '2026-03-10T09:00:00Z');
    expect(nested.map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(nested[0]!.error).toBe('exited with code 127: sh: 1: missing-tool-sb: not found');
  });
});
