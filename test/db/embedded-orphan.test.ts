import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { relocatedClusterDir } from '../../src/db/embedded-as-root.js';
import { EmbeddedPostgresError, startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.js';
import { eventually } from '../helpers/eventually.js';

/**
 * Issue 12: after `kill -9` of the bot alone, its embedded PostgreSQL keeps
 * running; the next start on the same folder must find that orphan by its
 * postmaster.pid, stop it and start cleanly, with no manual step.
 */

let dir: string | undefined;
let server: EmbeddedServer | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (server?.relocated) await rm(server.clusterDir, { recursive: true, force: true });
  for (const cleanup of cleanups) await cleanup();
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A "bot": a process of its own that starts the server on `folder` and keeps it. */
function startOwner(folder: string) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '-e', `import('./src/db/embedded.ts').then(async (m) => { const s = await m.startEmbeddedPostgres(${JSON.stringify(folder)}); console.log('UP ' + s.url()); })`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  return { child, output: () => out };
}

it('a second start on a folder whose server belongs to a bot still running refuses, naming that process, and leaves its server alone', async () => {
  // Two `npm start` on one DATA_DIR (a second terminal): the second must not take the first one's database away.
  const own = await mkdtemp(join(tmpdir(), 'scheduler-bot-twice-'));
  const folder = join(own, 'postgres');
  const first = startOwner(folder);
  cleanups.push(async () => {
    first.child.kill('SIGKILL');
    const cluster = process.getuid?.() === 0 ? await relocatedClusterDir(folder) : join(folder, 'pg');
    const pid = Number((await readFile(join(cluster, 'postmaster.pid'), 'utf8').catch(() => '0')).split('\n')[0]);
    if (pid > 0 && alive(pid)) process.kill(pid, 'SIGINT');
    await eventually(() => expect(pid > 0 && alive(pid)).toBe(false), 30_000);
    await rm(own, { recursive: true, force: true });
    if (cluster !== join(folder, 'pg')) await rm(cluster, { recursive: true, force: true });
  });
  await eventually(() => expect(first.output()).toContain('UP postgres://'), 120_000);
  const cluster = process.getuid?.() === 0 ? await relocatedClusterDir(folder) : join(folder, 'pg');
  const postmaster = Number((await readFile(join(cluster, 'postmaster.pid'), 'utf8')).split('\n')[0]);

  const second = startEmbeddedPostgres(folder);
  await expect(second).rejects.toThrow(EmbeddedPostgresError);
  await expect(second).rejects.toThrow(new RegExp(`in use by process ${first.child.pid}\\b.*another scheduler-bot.*DATA_DIR`));
  expect(alive(postmaster)).toBe(true);
  const client = new pg.Client({ connectionString: /UP (\S+)/.exec(first.output())![1] });
  await client.connect();
  try {
    expect((await client.query('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
  } finally {
    await client.end();
  }
}, 240_000);

it('a server orphaned by kill -9 of its process is stopped and the next start on the same folder succeeds', async () => {
  // Mode 0700, like `mktemp -d`: as root, the cluster then lives outside it, and the orphan is looked for there.
  dir = await mkdtemp(join(tmpdir(), 'scheduler-bot-orphan-'));
  const folder = join(dir, 'postgres');
  // The "bot": a process of its own that starts the server and is then killed outright.
  const { child, output } = startOwner(folder);
  await eventually(() => expect(output()).toContain('UP postgres://'), 120_000);
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));

  const cluster = process.getuid?.() === 0 ? await relocatedClusterDir(folder) : join(folder, 'pg');
  const orphan = Number((await readFile(join(cluster, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  expect(alive(orphan)).toBe(true);

  server = await startEmbeddedPostgres(folder);
  expect(server.clusterDir).toBe(cluster);
  expect(alive(orphan)).toBe(false);
  const client = new pg.Client({ connectionString: server.url() });
  await client.connect();
  try {
    expect((await client.query('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
  } finally {
    await client.end();
  }
  // The same password and port as the killed run's: the folder's own.
  expect(server.url()).toBe(/UP (\S+)/.exec(output())![1]);
}, 240_000);
