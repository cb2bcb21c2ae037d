import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createDb, createPool } from '../../src/db/connect.js';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { migrateToLatest } from '../../src/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin URL (any database) of the server the tests use. */
    pgAdminUrl: string;
    /** A migrated database each test file clones. */
    pgTemplate: string;
  }
}

/**
 * One real PostgreSQL for the run: TEST_DATABASE_URL or DATABASE_URL when set,
 * otherwise an embedded server in a temporary folder. The schema is migrated
 * once into a template database; each test file clones its own from it.
 */
export default async function setup(project: TestProject) {
  const given = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  let adminUrl: string;
  let stop: (() => Promise<void>) | undefined;
  let tmp: string | undefined;
  if (given) {
    adminUrl = given;
  } else {
    tmp = await mkdtemp(join(tmpdir(), 'scheduler-bot-test-'));
    const server = await startEmbeddedPostgres(tmp, { persistent: false });
    adminUrl = server.url('postgres');
    stop = server.stop;
  }
  const template = `sb_template_${process.pid}_${Date.now().toString(36)}`;
  const admin = createPool(adminUrl, 1);
  await admin.query(`create database ${template}`);
  const templateDb = createDb(createPool(withDatabase(adminUrl, template), 2));
  await migrateToLatest(templateDb);
  await templateDb.destroy();

  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);

  return async () => {
    // Clones left behind by a crashed file are dropped with the template.
    const leftovers = await admin.query<{ datname: string }>(
      `select datname from pg_database where datname like $1 or datname = $2`,
      [`sbt_${template.slice('sb_template_'.length)}_%`, template],
    );
    for (const row of leftovers.rows) await admin.query(`drop database if exists ${row.datname} with (force)`);
    await admin.end();
    await stop?.();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
