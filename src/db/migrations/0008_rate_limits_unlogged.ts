import { sql, type Kysely } from 'kysely';

/**
 * Rate-limit counters need no durability: they live one minute, and a crash
 * that loses them only gives every key a fresh window. As an UNLOGGED table
 * their per-request upsert writes no WAL, so a request no longer waits for a
 * WAL flush (fsync) just to be counted: measured 28% -> 54% of the baseline's
 * throughput in `npm run bench -- api` (docs/performance.md).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table rate_limits set unlogged`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table rate_limits set logged`.execute(db);
}
