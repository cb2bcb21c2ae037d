import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { CACHE_ROOT, postgresUser, relocatedClusterDir, STATE_ROOT } from '../../src/db/embedded-as-root.js';
import { EmbeddedPostgresError, startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.js';

/**
 * Issue 12: as root, from a clone inside a `mktemp -d` folder (mode 0700) that
 * the postgres user cannot enter, the embedded server still starts: its
 * binaries run from a root-owned copy, its cluster lives under
 * /var/lib/scheduler-bot, and no folder above DATA_DIR changes mode.
 */

let closed: string | undefined;
let server: EmbeddedServer | undefined;
let clusterDir: string | undefined;
afterAll(async () => {
  await server?.stop();
  if (closed) await rm(closed, { recursive: true, force: true });
  if (clusterDir) await rm(clusterDir, { recursive: true, force: true });
});

async function query(url: string, text: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

/** The server's process: its real uid and its environment. */
async function serverProcess(cluster: string) {
  const pid = Number((await readFile(join(cluster, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return { uid: Number(/^Uid:\s+(\d+)/m.exec(status)![1]), environ: await readFile(`/proc/${pid}/environ`, 'utf8') };
}

it.skipIf(process.getuid?.() !== 0)('as root, a DATA_DIR inside a 0700 folder works, keeps its data across restarts, and no folder above it changes mode', async () => {
  closed = await mkdtemp(join(tmpdir(), 'scheduler-bot-closed-')); // mode 0700, like `mktemp -d`
  const tmpMode = (await stat(tmpdir())).mode;
  const dir = join(closed, 'clone', '.data', 'postgres');
  const secret = `bot-secret-${Date.now()}`;
  process.env.SCHEDULER_BOT_TEST_SECRET = secret;
  try {
    server = await startEmbeddedPostgres(dir);
  } finally {
    delete process.env.SCHEDULER_BOT_TEST_SECRET;
  }
  clusterDir = server.clusterDir;
  expect(server.relocated).toBe(true);
  expect(clusterDir.startsWith(join(STATE_ROOT, 'clusters') + '/')).toBe(true);
  const owner = await stat(clusterDir);
  expect([owner.uid, owner.mode & 0o777]).toEqual([postgresUser().uid, 0o700]);
  // The password and the port stay in DATA_DIR; the server runs as postgres, without the bot's environment.
  expect(existsSync(join(dir, 'password')) && existsSync(join(dir, 'pg.port'))).toBe(true);
  const proc = await serverProcess(clusterDir);
  expect(proc.uid).toBe(postgresUser().uid);
  expect(proc.environ).not.toContain(secret);
  expect(proc.environ).not.toContain('SCHEDULER_BOT_TEST_SECRET');

  const url = server.url();
  await query(url, "create table kept (v text); insert into kept values ('still here')");
  await server.stop();
  server = undefined;

  server = await startEmbeddedPostgres(dir);
  expect(server.clusterDir).toBe(clusterDir);
  expect(server.url()).toBe(url);
  expect(await query(server.url(), 'select v from kept')).toEqual([{ v: 'still here' }]);
  await server.stop();
  server = undefined;

  expect((await stat(closed)).mode & 0o777).toBe(0o700);
  expect((await stat(tmpdir())).mode).toBe(tmpMode);
  // The binaries it ran: a copy only root can change.
  const copies = (await readdir(CACHE_ROOT)).filter((n) => n.startsWith('postgres-') && !n.includes('.tmp-'));
  expect(copies.length).toBeGreaterThan(0);
  for (const path of [CACHE_ROOT, ...copies.flatMap((c) => [join(CACHE_ROOT, c), join(CACHE_ROOT, c, 'bin', 'postgres')])]) {
    const st = await stat(path);
    expect([path, st.uid, st.mode & 0o022]).toEqual([path, 0, 0]);
  }
}, 240_000);

it.skipIf(process.getuid?.() !== 0)('as root, a DATA_DIR the postgres user can reach keeps its cluster inside it, owned by that user', async () => {
  const open = await mkdtemp(join(tmpdir(), 'scheduler-bot-open-'));
  await chmod(open, 0o711); // made by this test: the server's user may pass through
  try {
    const started = await startEmbeddedPostgres(join(open, 'postgres'), { persistent: false });
    try {
      expect([started.relocated, started.clusterDir]).toEqual([false, join(open, 'postgres', 'pg')]);
      expect((await stat(started.clusterDir)).uid).toBe(postgresUser().uid);
      expect(await query(started.url(), 'select 1 as ok')).toEqual([{ ok: 1 }]);
    } finally {
      await started.stop();
    }
    expect(existsSync(join(open, 'postgres', 'pg'))).toBe(false); // not persistent: removed on stop
  } finally {
    await rm(open, { recursive: true, force: true });
  }
}, 120_000);

it.skipIf(process.getuid?.() !== 0)('as root, an existing cluster inside a folder the postgres user cannot reach is refused in one line, not replaced by an empty one', async () => {
  const shut = await mkdtemp(join(tmpdir(), 'scheduler-bot-shut-'));
  const dir = join(shut, 'postgres');
  await mkdir(join(dir, 'pg'), { recursive: true });
  const elsewhere = await relocatedClusterDir(dir);
  try {
    await writeFile(join(dir, 'pg', 'PG_VERSION'), '18\n');
    const started = startEmbeddedPostgres(dir);
    await expect(started).rejects.toThrow(EmbeddedPostgresError);
    await expect(started).rejects.toThrow(/holds a cluster that user "postgres" cannot reach/);
    expect((await stat(shut)).mode & 0o777).toBe(0o700);
  } finally {
    await rm(shut, { recursive: true, force: true });
    await rm(elsewhere, { recursive: true, force: true });
  }
});
