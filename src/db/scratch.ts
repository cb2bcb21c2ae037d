import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { createDb, createPool, type Db } from './connect.js';
import { startEmbeddedPostgres } from './embedded.js';
import { migrateToLatest } from './migrate.js';

/**
 * Throwaway databases for replays, benchmarks and tests: a server (the one a
 * URL names, or an embedded one in a temporary folder) on which each run
 * creates databases of its own and drops them after.
 */
export interface ScratchServer {
  /** A URL of the server's maintenance database, for creating and dropping others. */
  adminUrl: string;
  embedded: boolean;
  stop(): Promise<void>;
}

export async function startScratchServer(databaseUrl: string | undefined, purpose: string, onLog?: (line: string) => void): Promise<ScratchServer> {
  if (databaseUrl) return { adminUrl: databaseUrl, embedded: false, stop: async () => {} };
  const dir = await mkdtemp(join(tmpdir(), `scheduler-bot-${purpose}-`));
  try {
    const server = await startEmbeddedPostgres(dir, { persistent: false, ...(onLog ? { onLog } : {}) });
    return {
      adminUrl: server.url('postgres'),
      embedded: true,
      async stop() {
        await server.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

export interface ScratchDatabase {
  db: Db;
  pool: pg.Pool;
  url: string;
  name: string;
  /** Drops the database, with whatever still connects to it. */
  drop(): Promise<void>;
}

/**
 * Creates database `name` on the server and connects to it: a clone of
 * `template` when given (already migrated), otherwise empty and migrated
 * here. `name` must be a plain identifier; callers make it from fixed
 * prefixes and random hex.
 */
export async function createScratchDatabase(adminUrl: string, name: string, options: { template?: string; poolSize?: number } = {}): Promise<ScratchDatabase> {
  if (options.template) await cloneTemplate(adminUrl, name, options.template);
  else await adminQuery(adminUrl, `create database ${name}`);
  const url = withDatabase(adminUrl, name);
  const pool = createPool(url, options.poolSize ?? 10);
  const db = createDb(pool);
  const drop = async () => {
    await db.destroy();
    await adminQuery(adminUrl, `drop database if exists ${name} with (force)`);
  };
  if (!options.template) {
    try {
      await migrateToLatest(db);
    } catch (error) {
      await drop();
      throw error;
    }
  }
  return { db, pool, url, name, drop };
}

async function cloneTemplate(adminUrl: string, name: string, template: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await adminQuery(adminUrl, `create database ${name} template ${template}`);
      return;
    } catch (error) {
      // Two clones of one template at the same instant: Postgres refuses one (the template is in use); try again.
      if ((error as { code?: string }).code !== '55006' || attempt > 50) throw error;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
    }
  }
}

/** One statement over a connection of its own (CREATE/DROP DATABASE cannot run inside a transaction or a busy pool). */
export async function adminQuery(adminUrl: string, text: string): Promise<void> {
  const pool = createPool(adminUrl, 1);
  try {
    await pool.query(text);
  } finally {
    await pool.end();
  }
}

/** The same server's URL for another database. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
