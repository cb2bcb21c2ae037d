import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import type pg from 'pg';
import { createDb, createPool, type Db } from '../../src/db/connect.js';
import { withDatabase } from './global-setup.js';

export interface TestDatabase {
  db: Db;
  pool: pg.Pool;
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own, cloned from the run's template. */
export async function createTestDatabase(poolSize = 10): Promise<TestDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const template = inject('pgTemplate');
  const name = `sbt_${template.slice('sb_template_'.length)}_${randomBytes(4).toString('hex')}`;
  const admin = createPool(adminUrl, 1);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`create database ${name} template ${template}`);
        break;
      } catch (error) {
        // Two files cloning the template at the same instant: Postgres refuses one; try again.
        if ((error as { code?: string }).code !== '55006' || attempt > 50) throw error;
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
      }
    }
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const pool = createPool(url, poolSize);
  const db = createDb(pool);
  return {
    db,
    pool,
    url,
    name,
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
