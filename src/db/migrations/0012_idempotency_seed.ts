/**
 * idempotency_keys.seed: a UUID v7 drawn when an Idempotency-Key is first
 * claimed and kept when a retry takes over the claim of an attempt that died
 * (its lease ran out). The resources the request creates get ids derived from
 * it (src/shared/derived-id.ts), so the retry finds what the dead attempt
 * already created instead of creating it a second time. Null on rows from
 * before this migration (their retries draw fresh ids, as before).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table idempotency_keys add column seed uuid`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table idempotency_keys drop column seed`.execute(db);
}
