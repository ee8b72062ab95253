import { sql, type Kysely } from 'kysely';

/**
 * Checkpoints of every log consumer (projectors and the webhook subscriber).
 * A consumer commits its rows and its checkpoint in one transaction.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table projection_checkpoints (
      name text primary key,
      position text,
      updated_at timestamptz not null default now(),
      failed_event_id uuid,
      error text
    );
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table projection_checkpoints`.execute(db);
}
