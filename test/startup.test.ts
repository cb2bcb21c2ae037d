import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, createPool } from '../src/db/connect.js';
import { freePort } from '../src/db/embedded.js';
import { relocatedClusterDir } from '../src/db/embedded-as-root.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { startBot } from './helpers/process.js';
import { eventually } from './helpers/eventually.js';
import { parseWorkflowsFile } from '../src/config/workflows-file.js';
import { syncWorkflowsFile } from '../src/services/sync-workflows.js';
import { migrations as registeredMigrations } from '../migrations/index.js';

let dir: string;
let cluster: string | undefined;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'scheduler-bot-start-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  if (cluster) await rm(cluster, { recursive: true, force: true });
});

describe('npm start', () => {
  it('refuses an invalid workflows file with one line per problem and writes nothing', async () => {
    const file = join(dir, 'bad.json');
    await writeFile(
      file,
      JSON.stringify({
        tenants: [{ id: 'acme', name: 'Acme' }],
        workflows: [
          { tenant: 'acme', name: 'a', cron: 'every day' },
          { tenant: 'acme', name: 'b', cron: '0 * * * *', timezone: 'Nowhere/Land' },
          { tenant: 'ghost', name: 'c', cron: '0 * * * *' },
          { tenant: 'acme', name: 'a', cron: '0 * * * *' },
        ],
      }),
    );
    const dataDir = join(dir, 'never-created');
    const bot = startBot({ WORKFLOWS_FILE: file, DATA_DIR: dataDir, PORT: '0' });
    expect(await bot.exited).not.toBe(0);
    const problems = bot.output().split('\n').filter((l) => l.startsWith(`  ${file}`));
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(/workflows\[0\]\.cron: invalid cron.*\(got "every day"\)/);
    expect(problems.join('\n')).toMatch(/workflows\[1\]\.timezone: .*"Nowhere\/Land"/);
    expect(problems.join('\n')).toMatch(/workflows\[2\]\.tenant: unknown tenant \(got "ghost"\)/);
    expect(problems.join('\n')).toMatch(/workflows\[3\]\.name: duplicate workflow name/);
    // What became of the valid part, in words: the operator must not wonder whether half the file went live.
    expect(bot.output().trim().split('\n').at(-1)).toBe(
      'nothing was started and nothing synced, the valid entries included: fix the 4 problems above and start again (a database keeps what its last good start synced)',
    );
    expect(existsSync(dataDir)).toBe(false);
  });

  it('names every bad environment variable and exits non-zero', async () => {
    const bot = startBot({ PORT: 'many', LOG_LEVEL: 'chatty' });
    expect(await bot.exited).toBe(2);
    expect(bot.output()).toContain('PORT="many"');
    expect(bot.output()).toContain('LOG_LEVEL="chatty"');
  });

  it('npm run migrate says in one line why it failed: a bad setting exits 2, an unreachable database 1, no stack trace', async () => {
    const badSetting = startBot({ PORT: 'many' }, 'src/cli/migrate.ts');
    expect(await badSetting.exited).toBe(2);
    expect(badSetting.output().trim()).toBe('invalid configuration:\n  PORT="many": Invalid input: expected number, received NaN');
    const unreachable = startBot({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' }, 'src/cli/migrate.ts');
    expect(await unreachable.exited).toBe(1);
    // It printed the pg error object: 20 lines of kysely's stack, errno, syscall.
    expect(unreachable.output().trim()).toBe('migrate failed: cannot reach the database (DATABASE_URL): connect ECONNREFUSED 127.0.0.1:1');
  });

  describe('against DATABASE_URL', () => {
    let t: TestDatabase;
    beforeAll(async () => {
      t = await createTestDatabase(2);
    });
    afterAll(async () => t.drop());

    it('syncs the bundled example, says ready and serves /healthz and /readyz', async () => {
      const port = await freePort();
      // Listening on one interface, the ready line names it: http://localhost would not answer on another.
      const bot = startBot({ DATABASE_URL: t.url, PORT: String(port), HOST: '127.0.0.1' });
      try {
        await bot.waitFor(new RegExp(`ready on http://127\\.0\\.0\\.1:${port}"`));
        const health = await fetch(`http://127.0.0.1:${port}/healthz`);
        expect(health.status).toBe(200);
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
        expect(ready.status).toBe(200);
        expect(await ready.json()).toMatchObject({ ready: true, database: 'ok' });
        const names = await t.db.selectFrom('workflows').select('name').orderBy('name').execute();
        expect(names.map((n) => n.name)).toEqual(['flaky-export', 'hourly-export', 'nightly-pipeline', 'quality-check']);
        // The first day: what it is watching and how to watch one's own, and why the API answers 401.
        const said = bot.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l).msg as string);
        expect(said).toContain(
          'no WORKFLOWS_FILE: watching the bundled example, whose flaky-export fails every minute on purpose; set WORKFLOWS_FILE to your own file (docs/workflows-file.md) to watch yours',
        );
        expect(said).toContain('no API_TOKEN: the admin API is off (every /api/v1 call without a tenant token answers 401); set API_TOKEN, 16 characters or more, to use it (docs/api.md)');
      } finally {
        expect(await bot.stop()).toBe(0);
      }
    });

    it('a closed terminal (SIGHUP) stops it as Ctrl-C does: shutting down, a last line saying it stopped, exit 0; a restart with the same file syncs nothing', async () => {
      // The bundled example, as a start before this one synced it (the test above, when run with it).
      await syncWorkflowsFile(t.db, parseWorkflowsFile(await readFile('examples/workflows.json', 'utf8')), new Date(), {});
      // Node's default for SIGHUP ended the process at once: the embedded PostgreSQL was left running, orphaned.
      const bot = startBot({ DATABASE_URL: t.url, PORT: '0' });
      await bot.waitFor(/ready on http:\/\/localhost:\d+/, 60_000);
      expect(await bot.stop('SIGHUP')).toBe(0);
      const said = bot.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l).msg as string);
      expect(said).toContain('workflows synced: 0 created, 0 updated, 4 unchanged, 0 removed');
      expect(said.slice(-2)).toEqual(['shutting down', expect.stringMatching(/^stopped \(SIGHUP\), exit 0: no run in flight; \d+ notifications? pending for the other replicas/)]);
    });

    it('a replica restarted on an older copy of the file than a running replica synced syncs nothing and says so, naming both copies', async () => {
      const shared = await createTestDatabase(2);
      const write = async (name: string, cron: string) => {
        const path = join(dir, name);
        await writeFile(path, JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme' }], workflows: [{ tenant: 'acme', name: 'load', cron }] }));
        return path;
      };
      const older = await write('older.json', '0 2 * * *');
      const newer = await write('newer.json', '0 3 * * *');
      // The older copy was synced once, by a replica since rolled forward.
      await syncWorkflowsFile(shared.db, parseWorkflowsFile(await readFile(older, 'utf8')), new Date(), {}, undefined, { path: older, modifiedAt: null, replicaId: 'gone:1' });
      const a = startBot({ DATABASE_URL: shared.url, PORT: '0', WORKFLOWS_FILE: newer, REPLICA_ID: 'replica-a' });
      let b: ReturnType<typeof startBot> | undefined;
      try {
        await a.waitFor(/ready on/, 60_000);
        await eventually(async () => expect(await shared.db.selectFrom('monitorUptime').select('replicaId').where('replicaId', '=', 'replica-a').execute()).not.toHaveLength(0)); // a heartbeat (a gap on a busy machine starts a second row)
        b = startBot({ DATABASE_URL: shared.url, PORT: '0', WORKFLOWS_FILE: older, REPLICA_ID: 'replica-b' });
        await b.waitFor(/ready on/, 60_000);
        const warning = b.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; msg: string }).find((l) => l.msg.startsWith('workflows file not synced'));
        expect(warning).toMatchObject({ level: 40 });
        expect(warning!.msg).toContain(`this copy (${older}, modified `);
        expect(warning!.msg).toContain(`replaced since by the copy of replica replica-a (${newer}, modified `);
        expect(b.output()).not.toMatch(/"msg":"workflows synced/);
        expect((await shared.db.selectFrom('workflows').select('cron').executeTakeFirstOrThrow()).cron).toBe('0 3 * * *');
      } finally {
        expect(await a.stop()).toBe(0);
        if (b) expect(await b.stop()).toBe(0);
        // Its stop completed: replica-a holds the newer file no more, and a full rollback is not refused for its last minute of heartbeat.
        const stopped = await shared.db.selectFrom('workflowsFileSyncs').select('replicaStoppedAt').where('replicaId', '=', 'replica-a').execute().finally(() => shared.drop());
        expect(stopped).toEqual([{ replicaStoppedAt: expect.any(Date) }]);
      }
    });

    it('waits for a database that does not answer yet, then starts; SIGTERM during the wait exits cleanly', async () => {
      // The database's address, served by nothing until the forwarder below listens (a failover, a database started with the bot).
      const port = await freePort();
      const real = new URL(t.url);
      const away = new URL(t.url);
      away.hostname = '127.0.0.1';
      away.port = String(port);
      const bot = startBot({ DATABASE_URL: away.toString(), PORT: '0' });
      const forwarder = createServer((client) => {
        const server = connect(Number(real.port || 5432), real.hostname);
        client.pipe(server).pipe(client);
        client.on('error', () => server.destroy());
        server.on('error', () => client.destroy());
      });
      try {
        await bot.waitFor(/the database does not answer; waiting for it/);
        expect(bot.child.exitCode).toBeNull();
        await new Promise<void>((resolve) => forwarder.listen(port, '127.0.0.1', resolve));
        await bot.waitFor(/ready on http:\/\/localhost:\d+/, 60_000);
        expect(bot.output()).toContain('the database answers; starting');
      } finally {
        expect(await bot.stop()).toBe(0);
        await new Promise((resolve) => forwarder.close(resolve));
      }

      const waiting = startBot({ DATABASE_URL: away.toString(), PORT: '0' });
      await waiting.waitFor(/the database does not answer; waiting for it/);
      expect(await waiting.stop()).toBe(0);
      expect(waiting.output()).not.toContain('start-up failed');
      // Expected while the database is away: one JSON line saying why, no stack (it carried the driver's whole trace).
      const line = JSON.parse(waiting.output().split('\n').find((l) => l.includes('the database does not answer; waiting for it'))!);
      expect(line).toMatchObject({ level: 40, error: expect.stringContaining('ECONNREFUSED') });
      expect(line).not.toHaveProperty('err');
    });

    it('gives up after STARTUP_DATABASE_WAIT_SECONDS, saying why', async () => {
      const away = new URL(t.url);
      away.hostname = '127.0.0.1';
      away.port = String(await freePort());
      const bot = startBot({ DATABASE_URL: away.toString(), PORT: '0', STARTUP_DATABASE_WAIT_SECONDS: '1' });
      expect(await bot.exited).toBe(1);
      expect(bot.output()).toContain('start-up failed');
      expect(bot.output()).toContain('ECONNREFUSED');
    });
  });

  // `dir` is a mkdtemp folder, mode 0700: as root, the postgres user cannot enter it.
  it('starts an embedded PostgreSQL under DATA_DIR and keeps its data across restarts, changing no folder above it', async () => {
    const dataDir = join(dir, 'data');
    const port = await freePort();
    const first = startBot({ DATA_DIR: dataDir, PORT: String(port) });
    await first.waitFor(/ready on/, 60_000);
    expect(first.output()).toContain('embedded');
    expect(await first.stop()).toBe(0);

    // Something written between the two runs must survive the second start.
    const second = startBot({ DATA_DIR: dataDir, PORT: String(port) });
    await second.waitFor(/ready on/, 60_000);
    if (process.getuid?.() === 0) {
      cluster = await relocatedClusterDir(join(dataDir, 'postgres'));
      expect(second.output()).toContain(cluster);
    }
    const portFile = await readFile(join(dataDir, 'postgres', 'pg.port'), 'utf8');
    const password = (await readFile(join(dataDir, 'postgres', 'password'), 'utf8')).trim();
    const db = createDb(createPool(`postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${portFile.trim()}/scheduler_bot`, 1));
    try {
      const workflows = await db.selectFrom('workflows').select(['id', 'createdAt']).execute();
      expect(workflows).toHaveLength(4);
      const migrations = await db.selectFrom('kysely_migration' as never).selectAll().execute();
      expect(migrations).toHaveLength(Object.keys(registeredMigrations).length);
    } finally {
      await db.destroy();
      expect(await second.stop()).toBe(0);
    }
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  }, 120_000);
});
