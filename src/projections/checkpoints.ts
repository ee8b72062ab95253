/** Reading and moving consumer checkpoints (table projection_checkpoints). */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/schema.ts';

export async function ensureCheckpoint(db: Kysely<Database>, name: string): Promise<void> {
  await sql`insert into projection_checkpoints (name, position) values (${name}, null) on conflict do nothing`.execute(db);
}

/** Locks the checkpoint row for this transaction and returns its position (a rebuild's swap holds it). */
export async function lockCheckpoint(trx: Transaction<Database>, name: string): Promise<string | null> {
  const { rows } = await sql<{ position: string | null }>`
    select position from projection_checkpoints where name = ${name} for update`.execute(trx);
  return rows[0]?.position ?? null;
}

/** Moves the checkpoint and tells waiters in every process (delivered on commit). */
export async function moveCheckpoint(trx: Transaction<Database>, name: string, position: string | null): Promise<void> {
  await sql`update projection_checkpoints set position = ${position}, updated_at = clock_timestamp(), failed_event_id = null, error = null
            where name = ${name}`.execute(trx);
  if (position !== null) await sql`select pg_notify('projection_progress', ${`${name} ${position}`})`.execute(trx);
}

export async function recordFailure(db: Kysely<Database>, name: string, eventId: string | null, error: string): Promise<void> {
  await sql`update projection_checkpoints set failed_event_id = ${eventId}, error = ${error}, updated_at = now()
            where name = ${name}`.execute(db);
}

export interface CheckpointRow {
  name: string;
  position: string | null;
  updated_at: Date;
  failed_event_id: string | null;
  error: string | null;
}

export async function readCheckpoints(db: Kysely<Database>): Promise<CheckpointRow[]> {
  const { rows } = await sql<CheckpointRow>`select * from projection_checkpoints order by name`.execute(db);
  return rows;
}
