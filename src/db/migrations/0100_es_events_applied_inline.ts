/**
 * es_events.applied_inline: whether the event's read-model rows were written
 * in its own append transaction (an inline projection, docs/architecture.md
 * "Inline projections"). `projections verify` needs it to know what the live
 * rows hold past a runner's checkpoint: exactly the events appended inline,
 * whichever process (inline or async, old or new) appended the others
 * (docs/read-models.md "Verifying"). A bookkeeping flag of the read side, not
 * part of the event: it is not hashed (docs/audit.md), and rows stored before
 * this migration read false.
 *
 * es_append gains the flag as a fourth argument (default false, so every
 * three-argument call keeps its meaning), and one more rule: every append
 * first takes a transaction advisory lock on its stream. The log's order is
 * the appending transaction's id (its xid), which PostgreSQL assigns at the
 * transaction's first write, and an UPDATE or INSERT ... ON CONFLICT takes
 * it before it waits for a concurrent appender's row lock: the waiter (with
 * the lower xid) then appended the later revisions yet came first in the
 * log, and `audit verify` saw the stream's revisions out of order (found
 * with 16 writers appending with 'any'; possible too between an exact and
 * an 'any' append racing for the same stream). The advisory lock assigns no
 * xid, so whoever waits for it takes its xid after the holder's. The rule
 * holds when es_append is its transaction's first write (every caller in
 * the service). Otherwise the function is 0060's.
 *
 * Events appended before this migration read applied_inline = false: an
 * inline event of that time still past a projector's checkpoint shows as a
 * difference in `projections verify` until the runner has passed it.
 */
import { sql, type Kysely } from 'kysely';
import { GENESIS_HASH } from '../../eventstore/chain.ts';

/** es_append as 0060 made it, with the flag (`flag`) or without it (down); 0103's down restores it. */
export function esAppendFunction(flag: boolean) {
  return sql`
    -- p_expected: >= 0 exact revision, -1 any, -2 no_stream, -3 stream_exists
    -- p_events: [{id, type, data, metadata, body}], body = hex sha256 of the event's RFC 8785 JSON
    -- p_applied_inline: the caller writes the events' read-model rows in this same transaction
    create function es_append(p_stream text, p_expected bigint, p_events jsonb${sql.raw(flag ? ', p_applied_inline boolean default false' : '')})
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
    begin${sql.raw(flag ? `
      -- Before the first write (see the migration's comment). Two-key advisory locks
      -- (namespace 1163084112, "ESAP" in ASCII) share no keys with the projectors' one-key locks.
      perform pg_advisory_xact_lock(1163084112, hashtext(p_stream));` : '')}
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
        insert into es_events (stream_id, revision, event_id, type, data, metadata, hash${sql.raw(flag ? ', applied_inline' : '')})
        select p_stream, v_prev + u.ord, (u.e->>'id')::uuid, u.e->>'type', u.e->'data', u.e->'metadata', v_hashes[u.ord]${sql.raw(flag ? ', p_applied_inline' : '')}
        from jsonb_array_elements(p_events) with ordinality as u(e, ord)
        order by u.ord
        returning es_events.transaction_id, es_events.global_position
      )
      select max(i.transaction_id), max(i.global_position) into v_tx, v_pos from inserted i;
      return query select v_prev + v_count, v_tx, v_pos;
    end;
    $$`;
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table es_events add column applied_inline boolean not null default false`.execute(db);
  await sql`drop function es_append(text, bigint, jsonb)`.execute(db);
  await esAppendFunction(true).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function es_append(text, bigint, jsonb, boolean)`.execute(db);
  await esAppendFunction(false).execute(db);
  await sql`alter table es_events drop column applied_inline`.execute(db);
}
