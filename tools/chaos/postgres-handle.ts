import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { systemClock } from '../../src/clock.js';
import { createDb, type Db } from '../../src/db/connect.js';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.js';

/** The chaos suite's own side of the database: the server, its pools, and what it asks of the ledger. */

export /** The Postgres the scenarios share; restartable only when the suite started it. */
class PostgresHandle {
  constructor(
    private readonly dir: string,
    readonly adminUrl: string,
    private embedded: EmbeddedServer | undefined,
  ) {}

  get restartable(): boolean {
    return !!this.embedded;
  }

  url(database: string): string {
    const u = new URL(this.adminUrl);
    u.pathname = `/${database}`;
    return u.toString();
  }

  async down(): Promise<void> {
    await this.embedded?.stop();
  }

  async up(): Promise<void> {
    if (this.embedded) this.embedded = await startEmbeddedPostgres(this.dir, { persistent: true, onLog: serverLog() });
  }

  get clusterDir(): string | undefined {
    return this.embedded?.clusterDir;
  }

  async stop(): Promise<void> {
    await this.embedded?.stop();
  }
}

/** With CHAOS_LOG_DIR, the embedded server's own log goes to `postgres.log` there, each chunk stamped with when the driver read it. */
export function serverLog(): ((chunk: string) => void) | undefined {
  const dir = process.env.CHAOS_LOG_DIR;
  if (!dir) return undefined;
  return (chunk) => appendFileSync(join(dir, 'postgres.log'), `--- ${new Date().toISOString()}\n${chunk}`);
}

/** A pool of the driver's own, named so that terminating the bot's connections leaves it alone. */
export function driverDb(url: string): Db {
  const pool = new pg.Pool({ connectionString: url, max: 10, application_name: 'chaos-driver' });
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return createDb(pool);
}

export async function adminQuery(admin: Db, text: string): Promise<void> {
  await sql.raw(text).execute(admin);
}

/** Finished runs the poller has not evaluated yet. */
export async function countUnevaluated(db: Db): Promise<number> {
  const { n } = await db
    .selectFrom('runs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', 'in', ['succeeded', 'failed', 'missed'])
    .where('processedAt', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** Nothing left to send and nothing left to evaluate, for a few consecutive looks: the moment it was so, or null when it never was. */
export async function settle(db: Db, timeoutMs: number): Promise<Date | null> {
  const until = systemClock.now().getTime() + timeoutMs;
  let quiet = 0;
  while (systemClock.now().getTime() < until) {
    try {
      const open = await db.selectFrom('notifications').select((eb) => eb.fn.countAll<number>().as('n')).where('status', 'in', ['pending', 'sending']).executeTakeFirstOrThrow();
      quiet = Number(open.n) === 0 && (await countUnevaluated(db)) === 0 ? quiet + 1 : 0;
      if (quiet >= 3) return systemClock.now();
    } catch {
      quiet = 0;
    }
    await systemClock.sleep(1_000);
  }
  return null;
}

/** Drops every connection the bot's processes hold to `database` (their pools must reconnect by themselves). */
export async function terminateBotConnections(admin: Db, database: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
    where datname = ${database} and application_name like 'scheduler-bot%' and pid <> pg_backend_pid()
  `.execute(admin);
  return rows[0]?.n ?? 0;
}
