import type { TestProject } from 'vitest/node';
import { createPool } from '../../src/db/connect.js';
import { createScratchDatabase, startScratchServer } from '../../src/db/scratch.js';

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
  const server = await startScratchServer(process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL, 'test');
  const { adminUrl } = server;
  const template = `sb_template_${process.pid}_${Date.now().toString(36)}`;
  // Created and migrated, then left without connections: Postgres clones only an idle template.
  const templateDb = await createScratchDatabase(adminUrl, template, { poolSize: 2 });
  await templateDb.db.destroy();
  const admin = createPool(adminUrl, 1);

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
    await server.stop();
  };
}
