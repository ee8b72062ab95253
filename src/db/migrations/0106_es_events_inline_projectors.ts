/**
 * es_events.inline_projectors: which projectors wrote the event's rows in its
 * append's transaction, one bit each (INLINE_BITS, src/projections/inline.ts).
 * Their runners skip such an event, in every process: a runner no longer
 * writes again what an API process wrote inline (docs/architecture.md
 * "Inline projections"). applied_inline (migration 0100) says only that some
 * did; a projector made inline by a later version must still apply the
 * events that an older version marked, so the mark names them.
 *
 * es_append takes it as a last parameter, after p_applied_inline, with a
 * default: processes of the previous version keep appending beside this one
 * (their events read 0, and every runner applies them, as before). Adding a
 * column with a constant default rewrites nothing: quick on any log.
 */
import { sql, type Kysely } from 'kysely';
import { esAppendArrays } from './0104_es_append_arrays.ts';

const PREVIOUS = sql`es_append(text, bigint, uuid[], text[], json[], json[], text[], boolean)`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table es_events add column inline_projectors smallint not null default 0`.execute(db);
  await sql`comment on column es_events.inline_projectors is
    'projectors that wrote the event''s read-model rows in its append''s transaction, one bit each (src/projections/inline.ts): their runners skip it'`.execute(db);
  await sql`drop function ${PREVIOUS}`.execute(db);
  await esAppendArrays(true).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function es_append(text, bigint, uuid[], text[], json[], json[], text[], boolean, smallint)`.execute(db);
  await esAppendArrays(false).execute(db);
  await sql`alter table es_events drop column inline_projectors`.execute(db);
}
