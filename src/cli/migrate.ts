import { loadConfig, ConfigError } from '../config/env.js';
import { migrateToLatest } from '../db/migrate.js';
import { openDatabase } from '../open-database.js';
import { createLogger } from '../log.js';

try {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const database = await openDatabase(config, logger, 2);
  try {
    const result = await migrateToLatest(database.db);
    const applied = result.results?.map((r) => `${r.migrationName}: ${r.status}`) ?? [];
    console.log(applied.length ? applied.join('\n') : 'database is up to date');
  } finally {
    await database.close();
  }
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}
