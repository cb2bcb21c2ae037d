import { join } from 'node:path';
import type pg from 'pg';
import type { Config } from './config/env.js';
import type { Logger } from './log.js';
import { createDb, createPool, type Db } from './db/connect.js';
import { startEmbeddedPostgres } from './db/embedded.js';

export interface OpenDatabase {
  /** The engine's pool: loops, Slack, readiness. */
  db: Db;
  pool: pg.Pool;
  /**
   * The HTTP API's own pool (the bulkhead of issue 19): after a database
   * blip, clients resend their reports all at once, and in a shared pool a
   * loop's query waited behind every one of them (pg-pool's queue is first
   * come, first served) until its connect timeout failed the tick.
   */
  apiDb: Db;
  /**
   * The run poller's own small pool (issue 19): after a termination every
   * loop reconnects at once, and in the shared pool the poller's connection
   * waited behind the others' (seconds on a starved CPU, out of a few
   * seconds between faults) before its batch could start.
   */
  pollerDb: Db;
  url: string;
  embedded: boolean;
  close(): Promise<void>;
}

/** The poller holds one connection at a time (a batch, then its retry launches); the second is spare. */
export const POLLER_POOL_SIZE = 2;

/** DATABASE_URL when set; otherwise an embedded PostgreSQL kept under DATA_DIR. */
export async function openDatabase(config: Config, logger: Logger, poolSize = 10): Promise<OpenDatabase> {
  let url = config.DATABASE_URL;
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (!url) {
    const dir = join(config.DATA_DIR, 'postgres');
    logger.info({ dir }, 'no DATABASE_URL: starting embedded PostgreSQL');
    const server = await startEmbeddedPostgres(dir, { onLog: (line) => logger.debug({ postgres: line.trim() }, 'embedded postgres') });
    if (server.relocated) logger.info({ dir, cluster: server.clusterDir }, 'the postgres user cannot reach DATA_DIR: the embedded cluster lives in its own folder');
    await ensureDatabase(server.url('postgres'), 'scheduler_bot');
    url = server.url('scheduler_bot');
    stopEmbedded = server.stop;
  }
  const pool = createPool(url, poolSize);
  const db = createDb(pool);
  const apiDb = createDb(createPool(url, poolSize));
  const pollerDb = createDb(createPool(url, POLLER_POOL_SIZE));
  return {
    db,
    pool,
    apiDb,
    pollerDb,
    url,
    embedded: !!stopEmbedded,
    async close() {
      await Promise.all([db.destroy(), apiDb.destroy(), pollerDb.destroy()]);
      await stopEmbedded?.();
    },
  };
}

export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const pool = createPool(adminUrl, 1);
  try {
    const found = await pool.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      await pool.query(`create database "${name.replace(/"/g, '""')}"`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created meanwhile by another process
      });
    }
  } finally {
    await pool.end();
  }
}
