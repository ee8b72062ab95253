import { sql, type Kysely } from 'kysely';

/**
 * An Idempotency-Key replay answers the very bytes of the first answer
 * (docs/api-pipeline.md): `response_body` is jsonb, which reorders object
 * keys, so the serialized body is kept as text beside it. Rows stored before
 * this migration have none and replay from `response_body`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table idempotency_keys add column response_bytes text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table idempotency_keys drop column response_bytes`.execute(db);
}
