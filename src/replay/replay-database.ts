import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, createPool, type Db } from '../db/connect.js';
import { startEmbeddedPostgres } from '../db/embedded.js';
import { migrateToLatest } from '../db/migrate.js';
import type { Logger } from '../log.js';

/** Where replay databases are made: DATABASE_URL's server, or an embedded one in a temporary folder. */
export interface ReplayServer {
  embedded: boolean;
  /** A fresh, migrated database of its own; `drop` removes it. */
  createDatabase(): Promise<ReplayDatabase>;
  stop(): Promise<void>;
}

export interface ReplayDatabase {
  db: Db;
  name: string;
  drop(): Promise<void>;
}

export async function startReplayServer(databaseUrl: string | undefined, logger: Logger): Promise<ReplayServer> {
  if (databaseUrl) return serverAt(databaseUrl, false, async () => {});
  const dir = await mkdtemp(join(tmpdir(), 'scheduler-bot-replay-'));
  try {
    const server = await startEmbeddedPostgres(dir, { persistent: false, onLog: (line) => logger.debug({ postgres: line.trim() }, 'embedded postgres') });
    return serverAt(server.url('postgres'), true, async () => {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

function serverAt(adminUrl: string, embedded: boolean, stop: () => Promise<void>): ReplayServer {
  return {
    embedded,
    stop,
    async createDatabase() {
      // Never the database DATABASE_URL names: a replay writes a whole night of rows.
      const name = `replay_${randomBytes(6).toString('hex')}`;
      await adminQuery(adminUrl, `create database ${name}`);
      const db = createDb(createPool(withDatabase(adminUrl, name), 10));
      const drop = async () => {
        await db.destroy();
        await adminQuery(adminUrl, `drop database if exists ${name} with (force)`);
      };
      try {
        await migrateToLatest(db);
      } catch (error) {
        await drop();
        throw error;
      }
      return { db, name, drop };
    },
  };
}

async function adminQuery(adminUrl: string, text: string): Promise<void> {
  const pool = createPool(adminUrl, 1);
  try {
    await pool.query(text);
  } finally {
    await pool.end();
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
