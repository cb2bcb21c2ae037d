import { Migrator, sql, type MigrationResultSet, type Kysely } from 'kysely';
import { migrations } from '../../migrations/index.js';
import { createDb, createPool } from './connect.js';

/**
 * A database migrated by a newer release than this one (a rollback, or an
 * old replica restarting during a rolling upgrade). Migrations are
 * forward-only, so this version refuses to run on that schema and says why.
 */
export class NewerSchemaError extends Error {
  constructor(readonly unknown: string[]) {
    super(
      `the database was migrated by a newer version of scheduler-bot: it has ${unknown.length === 1 ? 'migration' : 'migrations'} ${unknown.join(', ')}, which this version does not know. ` +
        'Migrations are forward-only: run the newer version (or a database of this version); nothing was changed.',
    );
    this.name = 'NewerSchemaError';
  }
}

/**
 * Applies every pending migration. Kysely's Migrator takes a row lock on its
 * lock table inside one transaction, so two processes starting at once run
 * the migrations once and the second one finds nothing to do. A database
 * holding migrations this version does not know is refused with
 * NewerSchemaError (kysely's own words, "corrupted migrations", sent
 * operators looking for damage that was not there).
 */
export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
  });
  const result = await migrator.migrateToLatest();
  if (result.error) {
    const unknown = await unknownMigrations(db).catch(() => []);
    if (unknown.length) throw new NewerSchemaError(unknown);
    throw result.error;
  }
  return result;
}

/**
 * The start-up's and `npm run migrate`'s migrations, on a connection of their
 * own without the engine's statement limits (`createPool`'s `migrations`):
 * an index built over a large ledger, or the wait for another replica's
 * migrations, may take minutes.
 */
export async function migrateDatabase(url: string): Promise<MigrationResultSet> {
  const db = createDb(createPool(url, 1, 'scheduler-bot-migrate', 'migrations'));
  try {
    return await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}

async function unknownMigrations(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  return rows.map((r) => r.name).filter((name) => !(name in migrations));
}
