import { sql, type Kysely } from 'kysely';

/**
 * The PostgreSQL event store (docs/architecture.md "Event store (PostgreSQL adapter)"). Global order is
 * (transaction_id, global_position); readers only see transactions older than
 * pg_snapshot_xmin, so an event whose transaction commits late is never skipped.
 * es_append does one append in one round trip; it raises SQLSTATE ES001 with the
 * actual revision in DETAIL when the expected revision does not hold.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table es_streams (
      stream_id text primary key,
      revision bigint not null
    );
    create table es_events (
      global_position bigint generated always as identity primary key,
      transaction_id xid8 not null default pg_current_xact_id(),
      stream_id text not null,
      revision bigint not null,
      event_id uuid not null,
      type text not null,
      data jsonb not null,
      metadata jsonb not null,
      created_at timestamptz not null default now(),
      constraint es_events_event_id_key unique (event_id),
      constraint es_events_stream_revision_key unique (stream_id, revision)
    );
    create index es_events_log_order on es_events (transaction_id, global_position);

    -- p_expected: >= 0 exact revision, -1 any, -2 no_stream, -3 stream_exists
    create function es_append(p_stream text, p_expected bigint, p_ids uuid[], p_types text[], p_data jsonb[], p_meta jsonb[])
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
      -- The payload is the appended position: a consumer that has not reached it
      -- yet knows an older transaction is still open and polls briefly.
      perform pg_notify('es_appended', lpad(v_tx::text, 20, '0') || '-' || lpad(v_pos::text, 20, '0'));
      return query select v_prev + v_count, v_tx, v_pos;
    end;
    $$;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function es_append; drop table es_events; drop table es_streams;`.execute(db);
}
