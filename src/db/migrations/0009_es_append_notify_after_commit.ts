import { sql, type Kysely } from 'kysely';

/**
 * es_append no longer calls pg_notify: the store sends the NOTIFY after the
 * append has committed (src/eventstore/postgres.ts, AppendedSignal).
 * PostgreSQL serializes the commits of every transaction that notifies with
 * one database-wide lock held through the WAL flush, so with pg_notify inside
 * es_append concurrent appends committed one at a time instead of sharing
 * flushes (bench/eventstore.ts, docs/performance.md "Event store").
 * Same signature and behaviour otherwise.
 */
function esAppend(notify: boolean) {
  return sql`
    create or replace function es_append(p_stream text, p_expected bigint, p_ids uuid[], p_types text[], p_data jsonb[], p_meta jsonb[])
    returns table (last_revision bigint, last_transaction xid8, last_position bigint)
    language plpgsql as $$
    declare
      v_count bigint := cardinality(p_ids);
      v_prev bigint;
      v_actual bigint;
      v_tx xid8;
      v_pos bigint;
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

      with inserted as (
        insert into es_events (stream_id, revision, event_id, type, data, metadata)
        select p_stream, v_prev + u.ord, u.id, u.t, u.d, u.m
        from unnest(p_ids, p_types, p_data, p_meta) with ordinality as u(id, t, d, m, ord)
        order by u.ord
        returning es_events.transaction_id, es_events.global_position
      )
      select max(i.transaction_id), max(i.global_position) into v_tx, v_pos from inserted i;
      ${notify ? sql.raw(`perform pg_notify('es_appended', lpad(v_tx::text, 20, '0') || '-' || lpad(v_pos::text, 20, '0'));`) : sql.raw('')}
      return query select v_prev + v_count, v_tx, v_pos;
    end;
    $$;
  `;
}

export async function up(db: Kysely<any>): Promise<void> {
  await esAppend(false).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await esAppend(true).execute(db);
}
