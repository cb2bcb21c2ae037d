import { Migrator, type MigrationResultSet, type Kysely } from 'kysely';
import { migrations } from '../../migrations/index.js';

/**
 * Applies every pending migration. Kysely's Migrator takes a row lock on its
 * lock table inside one transaction, so two processes starting at once run
 * the migrations once and the second one finds nothing to do.
 */
export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
