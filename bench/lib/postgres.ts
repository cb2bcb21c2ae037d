import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, createPool, type Db } from '../../src/db/connect.js';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { migrateToLatest } from '../../src/db/migrate.js';

/** The PostgreSQL server a benchmark run uses: DATABASE_URL's, or an embedded one in a temp dir. */
export interface BenchServer {
  adminUrl: string;
  embedded: boolean;
  stop(): Promise<void>;
}

export async function startBenchServer(): Promise<BenchServer> {
  const given = process.env.DATABASE_URL;
  if (given) return { adminUrl: given, embedded: false, stop: async () => {} };
  const dir = await mkdtemp(join(tmpdir(), 'scheduler-bot-bench-'));
  const server = await startEmbeddedPostgres(dir, { persistent: false });
  return {
    adminUrl: server.url('postgres'),
    embedded: true,
    async stop() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface BenchDatabase {
  url: string;
  name: string;
  db: Db;
  drop(): Promise<void>;
}

/** A fresh, migrated database of the benchmark's own, dropped (with whatever connects to it) by drop(). */
export async function freshDatabase(adminUrl: string, label: string, poolSize = 10): Promise<BenchDatabase> {
  const name = `bench_${label.replace(/[^a-z0-9_]/g, '_')}_${randomBytes(3).toString('hex')}`;
  const admin = createPool(adminUrl, 1);
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const db = createDb(createPool(url, poolSize));
  await migrateToLatest(db);
  return {
    url,
    name,
    db,
    async drop() {
      await db.destroy();
      const a = createPool(adminUrl, 1);
      try {
        await a.query(`drop database if exists ${name} with (force)`);
      } finally {
        await a.end();
      }
    },
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
