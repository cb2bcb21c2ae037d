import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { EmbeddedPostgresError, startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.js';
import { eventually } from '../helpers/eventually.js';

/**
 * Issue 12: after `kill -9` of the bot alone, its embedded PostgreSQL keeps
 * running; the next start on the same folder must find that orphan by its
 * postmaster.pid, stop it and start cleanly, with no manual step.
 */

let dir: string | undefined;
let server: EmbeddedServer | undefined;
afterAll(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('a server orphaned by kill -9 of its process is stopped and the next start on the same folder succeeds', async () => {
  dir = await mkdtemp(join(tmpdir(), 'scheduler-bot-orphan-'));
  await chmod(dir, 0o711); // as root, the server's own user passes through to its data
  const folder = join(dir, 'postgres');
  // The "bot": a process of its own that starts the server and is then killed outright.
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '-e', `import('./src/db/embedded.ts').then(async (m) => { const s = await m.startEmbeddedPostgres(${JSON.stringify(folder)}); console.log('UP ' + s.url()); })`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  await eventually(() => expect(out).toContain('UP postgres://'), 120_000);
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));

  const orphan = Number((await readFile(join(folder, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
  expect(alive(orphan)).toBe(true);

  server = await startEmbeddedPostgres(folder);
  expect(alive(orphan)).toBe(false);
  const client = new pg.Client({ connectionString: server.url() });
  await client.connect();
  try {
    expect((await client.query('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
  } finally {
    await client.end();
  }
  // The same password and port as the killed run's: the folder's own.
  expect(server.url()).toBe(/UP (\S+)/.exec(out)![1]);
}, 240_000);

it.skipIf(process.getuid?.() !== 0)('as root, a folder the postgres user cannot enter is refused in one line, and its mode is left as it was', async () => {
  const closed = await mkdtemp(join(tmpdir(), 'scheduler-bot-closed-')); // mode 0700, like `mktemp -d`
  try {
    const started = startEmbeddedPostgres(join(closed, 'data', 'postgres'));
    await expect(started).rejects.toThrow(EmbeddedPostgresError);
    await expect(started).rejects.toThrow(new RegExp(`cannot enter ${closed} \\(mode 700\\).*set DATABASE_URL`));
    expect((await stat(closed)).mode & 0o777).toBe(0o700);
  } finally {
    await rm(closed, { recursive: true, force: true });
  }
});
