import { Migrator, type Kysely } from 'kysely';
import { writeBusinessOffsets } from './business-offsets.ts';
import { migrations } from './migrations/index.ts';

/** Runs every pending migration (at start-up, in tests, in the CLI). */
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  // Unordered: each team adds migrations in its own number range (0070s, 0080s, 0090s), and a
  // database may have run a later range before an earlier one was merged; Kysely refuses that by default.
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${(error as Error).message ?? String(error)}`);
  }
  // Not a migration: this process's time zone data, which a newer Node may correct (src/db/business-offsets.ts).
  await writeBusinessOffsets(db);
}
