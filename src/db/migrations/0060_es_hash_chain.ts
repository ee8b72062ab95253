/**
 * The hash chain of every stream (docs/audit.md "The hash chain",
 * src/eventstore/chain.ts). es_events gains `hash`; es_append takes each
 * event's body digest (computed by the writer, field "body" of each element)
 * and chains it to the previous event of the stream:
 *
 *   hash = hex(sha256(prev_hash || E'\n' || stream || E'\n' || revision || E'\n' || body))
 *
 * The previous hash is read after es_streams' row is locked (update, or the
 * insert of a new stream), so concurrent appenders to one stream chain one
 * after the other; still one round trip, still one statement for the caller.
 * Events stored before this migration are hashed here (backfill, in Node,
 * with the same functions as the writers), so every stream chains from its
 * first event.
 */
import { sql, type Kysely } from 'kysely';
import { bodyDigest, chainStep, GENESIS_HASH } from '../../eventstore/chain.ts';

const BACKFILL_BATCH = 5000;

async function backfill(db: Kysely<any>): Promise<void> {
  let after: { stream: string; revision: number } | null = null;
  let prev = GENESIS_HASH;
  for (;;) {
    const { rows }: { rows: any[] } = await sql`
      select global_position, stream_id, revision, event_id, type, data, metadata from es_events
      where ${after === null ? sql`true` : sql`(stream_id, revision) > (${after.stream}, ${after.revision})`}
      order by stream_id, revision limit ${BACKFILL_BATCH}`.execute(db);
    if (rows.length === 0) return;
    const positions: string[] = [];
    const hashes: string[] = [];
    for (const r of rows) {
      const revision = Number(r.revision);
      if (after === null || after.stream !== r.stream_id) prev = GENESIS_HASH;
      prev = chainStep(prev, r.stream_id, revision, bodyDigest({ id: r.event_id, type: r.type, data: r.data, metadata: r.metadata }));
      positions.push(String(r.global_position));
      hashes.push(prev);
      after = { stream: r.stream_id, revision };
    }
    await sql`update es_events e set hash = v.hash
      from unnest(${positions}::bigint[], ${hashes}::text[]) as v(position, hash)
      where e.global_position = v.position`.execute(db);
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table es_events add column hash text`.execute(db);
  await backfill(db);
  await sql`
    alter table es_events alter column hash set not null;

    -- p_expected: >= 0 exact revision, -1 any, -2 no_stream, -3 stream_exists
    -- p_events: [{id, type, data, metadata, body}], body = hex sha256 of the event's RFC 8785 JSON
    create or replace function es_append(p_stream text, p_expected bigint, p_events jsonb)
    returns table (last_revision bigint, last_transaction xid8, last_position bigint)
    language plpgsql as $$
    declare
      v_count bigint := jsonb_array_length(p_events);
      v_prev bigint;
      v_actual bigint;
      v_tx xid8;
      v_pos bigint;
      v_hash text;
      v_hashes text[];
    begin
      if p_expected = -2 then
        insert into es_streams (stream_id, revision) values (p_stream, v_count - 1) on conflict do nothing;
        if not found then
          select revision into v_actual from es_streams where stream_id = p_stream;
          raise exception using errcode = 'ES001', message = 'wrong expected version', detail = coalesce(v_actual::text, 'no_stream');
        end if;
        v_prev := -1;
      elsif p_expected >= 0 then
        update es_streams set revision = revision + v_count where stream_id = p_stream and revision = p_expected;
        if not found then
          select revision into v_actual from es_streams where stream_id = p_stream;
          raise exception using errcode = 'ES001', message = 'wrong expected version', detail = coalesce(v_actual::text, 'no_stream');
        end if;
        v_prev := p_expected;
      elsif p_expected = -3 then
        update es_streams set revision = revision + v_count where stream_id = p_stream returning revision - v_count into v_prev;
        if not found then
          raise exception using errcode = 'ES001', message = 'wrong expected version', detail = 'no_stream';
        end if;
      else
        insert into es_streams as s (stream_id, revision) values (p_stream, v_count - 1)
          on conflict (stream_id) do update set revision = s.revision + v_count
          returning s.revision - v_count into v_prev;
      end if;

      -- The stream row is locked by now: the previous event is committed and ours to chain to.
      if v_prev < 0 then
        v_hash := '${sql.raw(GENESIS_HASH)}';
      else
        select e.hash into v_hash from es_events e where e.stream_id = p_stream and e.revision = v_prev;
      end if;
      v_hashes := array_fill(null::text, array[v_count::int]);
      for i in 1 .. v_count loop
        v_hash := encode(sha256(convert_to(
          v_hash || E'\\n' || p_stream || E'\\n' || (v_prev + i)::text || E'\\n' || (p_events -> (i - 1)::int ->> 'body'),
          'UTF8')), 'hex');
        v_hashes[i] := v_hash;
      end loop;

      with inserted as (
        insert into es_events (stream_id, revision, event_id, type, data, metadata, hash)
        select p_stream, v_prev + u.ord, (u.e->>'id')::uuid, u.e->>'type', u.e->'data', u.e->'metadata', v_hashes[u.ord]
        from jsonb_array_elements(p_events) with ordinality as u(e, ord)
        order by u.ord
        returning es_events.transaction_id, es_events.global_position
      )
      select max(i.transaction_id), max(i.global_position) into v_tx, v_pos from inserted i;
      return query select v_prev + v_count, v_tx, v_pos;
    end;
    $$;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function es_append(text, bigint, jsonb); alter table es_events drop column hash`.execute(db);
  // 0011 replaces 0009's function: recreate that one first, then let 0011 swap it.
  await (await import('./0009_es_append_notify_after_commit.ts')).up(db);
  await (await import('./0011_es_append_one_json.ts')).up(db);
}
