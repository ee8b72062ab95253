/**
 * es_append takes the events as parallel arrays (ids, types, data,
 * metadata and each event's digest, "body") instead of one JSON array.
 *
 * A `json` value is text that every operator parses again: taking an event's
 * id, type, data, metadata and digest out of the array parsed its text six or
 * seven times, more than storing it cost. With arrays, each event's data and
 * metadata are parsed once, by the `json` input check the column needs
 * anyway. Measured in the server alone (3,000 appends of a 1.2 KB event in
 * one DO block), 63 to 66 us per append against 103 to 117
 * (docs/performance.md "es_append from arrays").
 *
 * Everything else is as in migration 0103 (the stream's part is 0103's own
 * text, esAppendStreamHead): the stream's lock before its first write (the log's order is the xid's, migration 0100), the expected
 * revision, the chain (src/eventstore/chain.ts: each hash covers the
 * previous one, the stream, the revision and the digest of the event's
 * RFC 8785 text), data and metadata stored as the text given, and
 * p_applied_inline. A lone event (nearly every append) takes the shortest
 * path: no loop, no unnest.
 *
 * Processes of the previous version cannot append once it has run (they
 * call es_append with one json argument): stop them first
 * (docs/operations.md "Upgrades").
 */
import { sql, type Kysely } from 'kysely';
import { esAppendJsonFunction, esAppendStreamHead } from './0103_es_events_json_text.ts';

/**
 * The function; `projectors`: with migration 0106's last parameter,
 * p_inline_projectors, stored in es_events.inline_projectors.
 */
export const esAppendArrays = (projectors: boolean) => sql`
  -- p_expected: >= 0 exact revision, -1 any, -2 no_stream, -3 stream_exists
  -- p_ids, p_types, p_data, p_metadata, p_bodies: one element per event, in order; p_bodies[i] is the hex sha256
  --   of event i's RFC 8785 text; data and metadata are stored as the text they are given
  -- p_applied_inline: the caller writes the events' read-model rows in this same transaction${sql.raw(projectors ? `
  -- p_inline_projectors: which projectors write them (bits: src/projections/inline.ts); their runners skip the events` : '')}
  create function es_append(p_stream text, p_expected bigint, p_ids uuid[], p_types text[], p_data json[], p_metadata json[],
                            p_bodies text[], p_applied_inline boolean default false${sql.raw(projectors ? ', p_inline_projectors smallint default 0' : '')})
  returns table (last_revision bigint, last_transaction xid8, last_position bigint)
  language plpgsql as $$
  declare
    v_count bigint := cardinality(p_ids);
    v_prev bigint;
    v_actual bigint;
    v_tx xid8;
    v_pos bigint;
    v_hash text;
    v_hashes text[];
  begin
    if v_count = 0 or cardinality(p_types) <> v_count or cardinality(p_data) <> v_count
       or cardinality(p_metadata) <> v_count or cardinality(p_bodies) <> v_count then
      raise exception using errcode = '22023', message = 'es_append: one id, type, data, metadata and body per event, at least one event';
    end if;
${esAppendStreamHead}
    if v_count = 1 then -- nearly every append: no loop, no unnest
      insert into es_events (stream_id, revision, event_id, type, data, metadata, hash, applied_inline${sql.raw(projectors ? ', inline_projectors' : '')})
      values (p_stream, v_prev + 1, p_ids[1], p_types[1], p_data[1], p_metadata[1],
              encode(sha256(convert_to(v_hash || E'\\n' || p_stream || E'\\n' || (v_prev + 1)::text || E'\\n' || p_bodies[1], 'UTF8')), 'hex'),
              p_applied_inline${sql.raw(projectors ? ', p_inline_projectors' : '')})
      returning transaction_id, global_position into v_tx, v_pos;
    else
      v_hashes := array_fill(null::text, array[v_count::int]);
      for i in 1 .. v_count loop
        v_hash := encode(sha256(convert_to(
          v_hash || E'\\n' || p_stream || E'\\n' || (v_prev + i)::text || E'\\n' || p_bodies[i],
          'UTF8')), 'hex');
        v_hashes[i] := v_hash;
      end loop;
      with inserted as (
        insert into es_events (stream_id, revision, event_id, type, data, metadata, hash, applied_inline${sql.raw(projectors ? ', inline_projectors' : '')})
        select p_stream, v_prev + u.ord, u.id, u.t, u.d, u.m, v_hashes[u.ord], p_applied_inline${sql.raw(projectors ? ', p_inline_projectors' : '')}
        from unnest(p_ids, p_types, p_data, p_metadata) with ordinality as u(id, t, d, m, ord)
        order by u.ord
        returning es_events.transaction_id, es_events.global_position
      )
      select max(i.transaction_id), max(i.global_position) into v_tx, v_pos from inserted i;
    end if;
    return query select v_prev + v_count, v_tx, v_pos;
  end;
  $$`;

export const esAppendArraysFunction = esAppendArrays(false);

export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop function es_append(text, bigint, json, boolean)`.execute(db);
  await esAppendArraysFunction.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function es_append(text, bigint, uuid[], text[], json[], json[], text[], boolean)`.execute(db);
  await esAppendJsonFunction.execute(db);
}
