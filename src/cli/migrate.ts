import { loadConfig, ConfigError } from '../config/env.js';
import { isConnectionError } from '../db/connection-errors.js';
import { migrateDatabase } from '../db/migrate.js';
import { openDatabase } from '../open-database.js';
import { createLogger } from '../log.js';

/**
 * `npm run migrate`: one line on failure, like the bot's own start: a bad
 * setting exits 2 naming it; a database that cannot be reached, or one a
 * newer version migrated, exits 1 saying so, without a stack trace.
 */
try {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const database = await openDatabase(config, logger, 2);
  try {
    const result = await migrateDatabase(database.url);
    const applied = result.results?.map((r) => `${r.migrationName}: ${r.status}`) ?? [];
    console.log(applied.length ? applied.join('\n') : 'database is up to date');
  } finally {
    await database.close();
  }
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  const message = error instanceof Error ? error.message : String(error);
  console.error(isConnectionError(error) ? `migrate failed: cannot reach the database (DATABASE_URL): ${message}` : `migrate failed: ${message}`);
  process.exit(1);
}
