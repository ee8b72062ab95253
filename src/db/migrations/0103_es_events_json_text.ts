/**
 * es_events.data and es_events.metadata become `json` (they were `jsonb`),
 * and hold exactly the RFC 8785 text the event's hash covers
 * (docs/audit.md "What the log stores").
 *
 * `jsonb` stores a parsed tree and prints it back in its own form (members by
 * length, ", " and ": " between them), so checking an event's hash meant
 * parsing its JSON and printing it canonically again: most of `audit
 * verify`'s time (docs/performance.md "Audit verify on the stored text").
 * `json` keeps the text it was given, byte for byte, after checking that it
 * is JSON; es_append now stores the canonical text the writer hashed
 * (appendPayload, src/eventstore/postgres.ts), and `audit verify` hashes the
 * stored text as it is. Readers are unchanged: the driver parses `json` as
 * it parsed `jsonb`, and the `->`/`->>` operators work on both.
 *
 * Events stored before this migration are rewritten into their canonical
 * text here, in Node with the writers' own function, so every event of the
 * log is stored the same way. For every event the service wrote only the
 * text changes, not the value: the hashes, which cover the canonical text of
 * the value, stay valid (the test of this migration verifies a log written
 * before it). A value written by hand that JavaScript reads differently from
 * PostgreSQL (a number beyond a double's precision, 1e400) is not the
 * service's: the former is printed as JavaScript reads it, the latter left as
 * stored (`audit verify` names such an event: its stored text is not the
 * hashed one).
 *
 * Running it: the whole log is rewritten in the migration's transaction,
 * under an exclusive lock on es_events, so on a large log it is a
 * maintenance window (200,000 events took 28 s on two cores), and
 * the table and its indexes are worth a VACUUM FULL afterwards. Processes
 * of the previous version cannot append once it has run (their es_append
 * call passes jsonb): stop them first, as for any migration that changes
 * es_append (docs/operations.md "Upgrades").
 *
 * es_append takes the events as `json` too: `jsonb` would reorder the
 * members of the text before it is stored. A `json` value is text that each
 * operator parses again, so the events' bodies are taken out of the array in
 * one pass rather than addressed by index (which would parse the array from
 * its start every time), and a lone event (nearly every append) takes the
 * shortest path: its body read directly, no loop.
 */
import { sql, type Kysely } from 'kysely';
import { canonicalJson } from '../../eventstore/jcs.ts';
import { GENESIS_HASH } from '../../eventstore/chain.ts';
import { esAppendFunction } from './0100_es_events_applied_inline.ts';

const REWRITE_BATCH = 2000;

/** The RFC 8785 text of a stored JSON text, or the text as it is when JavaScript cannot print it canonically (1e400). */
function canonicalText(text: string): string {
  try {
    return canonicalJson(JSON.parse(text)) ?? text;
  } catch {
    return text; // left as stored: `audit verify` then names the event, whose text is not the hashed one
  }
}

/** Every stored event's data and metadata as RFC 8785 text (what its hash covers). */
async function canonicalizeStoredEvents(db: Kysely<any>): Promise<void> {
  let after = '0';
  for (;;) {
    // `position`, not `global_position`: ORDER BY would take the output column, and sort the text.
    const { rows } = await sql<{ position: string; data: string; metadata: string }>`
      select global_position::text as position, data::text as data, metadata::text as metadata from es_events
      where global_position > ${after}::bigint order by global_position limit ${REWRITE_BATCH}`.execute(db);
    if (rows.length === 0) return;
    await sql`update es_events e set data = v.data, metadata = v.metadata
      from unnest(${rows.map((r) => r.position)}::bigint[], ${rows.map((r) => canonicalText(r.data))}::json[],
                  ${rows.map((r) => canonicalText(r.metadata))}::json[]) as v(position, data, metadata)
      where e.global_position = v.position`.execute(db);
    after = rows[rows.length - 1].position;
  }
}

/**
 * The part of es_append that claims the stream, shared by this migration's
 * function and 0104's (one text of the rule, not two): the stream's advisory
 * lock before the first write, the expected revision checked and the stream
 * row moved (v_prev: the revision before the new events), and the previous
 * event's hash (v_hash) to chain to. Expects v_count, v_prev, v_actual and
 * v_hash declared. Like any migration's SQL it is history: never changed once
 * released, or the two migrations would no longer create what they created.
 */
export const esAppendStreamHead = sql`    -- Before the first write: the log's order is the xid's (migration 0100). Two-key advisory locks
    -- (namespace 1163084112, "ESAP" in ASCII) share no keys with the projectors' one-key locks.
    perform pg_advisory_xact_lock(1163084112, hashtext(p_stream));
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
    end if;`;

/** This migration's es_append (its events as one json array), which 0104 replaces; exported for 0104's down. */
export const esAppendJsonFunction = sql`
  -- p_expected: >= 0 exact revision, -1 any, -2 no_stream, -3 stream_exists
  -- p_events: [{body, data, id, metadata, type}]: each event's RFC 8785 text with "body", the hex sha256 of that
  --   text, added first; data and metadata are stored as the text they are given
  -- p_applied_inline: the caller writes the events' read-model rows in this same transaction
  create function es_append(p_stream text, p_expected bigint, p_events json, p_applied_inline boolean default false)
  returns table (last_revision bigint, last_transaction xid8, last_position bigint)
  language plpgsql as $$
  declare
    v_count bigint := json_array_length(p_events);
    v_bodies text[];
    v_prev bigint;
    v_actual bigint;
    v_tx xid8;
    v_pos bigint;
    v_hash text;
    v_hashes text[];
  begin
${esAppendStreamHead}
    if v_count = 1 then -- nearly every append: one statement fewer than the loop's
      v_hashes := array[encode(sha256(convert_to(
        v_hash || E'\\n' || p_stream || E'\\n' || (v_prev + 1)::text || E'\\n' || (p_events -> 0 ->> 'body'),
        'UTF8')), 'hex')];
    else
      -- Every body taken out in one pass: a json value is text, and p_events -> i would parse it from its start each time.
      v_bodies := array(select u.e ->> 'body' from json_array_elements(p_events) with ordinality as u(e, ord) order by u.ord);
      v_hashes := array_fill(null::text, array[v_count::int]);
      for i in 1 .. v_count loop
        v_hash := encode(sha256(convert_to(
          v_hash || E'\\n' || p_stream || E'\\n' || (v_prev + i)::text || E'\\n' || v_bodies[i],
          'UTF8')), 'hex');
        v_hashes[i] := v_hash;
      end loop;
    end if;

    with inserted as (
      insert into es_events (stream_id, revision, event_id, type, data, metadata, hash, applied_inline)
      select p_stream, v_prev + u.ord, (u.e->>'id')::uuid, u.e->>'type', u.e->'data', u.e->'metadata', v_hashes[u.ord], p_applied_inline
      from json_array_elements(p_events) with ordinality as u(e, ord)
      order by u.ord
      returning es_events.transaction_id, es_events.global_position
    )
    select max(i.transaction_id), max(i.global_position) into v_tx, v_pos from inserted i;
    return query select v_prev + v_count, v_tx, v_pos;
  end;
  $$`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table es_events alter column data type json using data::json, alter column metadata type json using metadata::json`.execute(db);
  await canonicalizeStoredEvents(db);
  await sql`drop function es_append(text, bigint, jsonb, boolean)`.execute(db);
  await esAppendJsonFunction.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function es_append(text, bigint, json, boolean)`.execute(db);
  await esAppendFunction(true).execute(db);
  await sql`alter table es_events alter column data type jsonb using data::jsonb, alter column metadata type jsonb using metadata::jsonb`.execute(db);
}
