import { sql, type Kysely } from 'kysely';
import { foldForSearch } from '../../shared/search.ts';

/**
 * schedule_customers: each customer's newest name and version, as the
 * schedules projector reads them from the customer events. A schedule row
 * takes the newest name known there whenever the projector writes it, and
 * every row of a customer takes a rename; only over an older version
 * (recurring_schedules.customer_version, migration 0105). So the order in
 * which a rename and a schedule's creation meet no longer matters: a schedule
 * created from a read of the customer just before a rename committed, or a
 * row that a later event of the schedule wrote first (its creation applied
 * after it), ends with the newest name, whatever the batching (without it,
 * one event at a time and a whole batch gave different rows).
 *
 * It is the projector's own table, not the customers read model, so that a
 * rebuild of the schedules projector (which replays its events alone) finds
 * the names as they were at each point of the log.
 *
 * Filled here from the log (the last event of each customer stream, as the
 * projector would have read it; not the customers read model, whose runner
 * may stand elsewhere in the log), and every schedule row then takes its
 * customer's newest name, as a rebuild gives it (also over a name the earlier
 * projector left stale by applying an older rename again).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table schedule_customers (
      id uuid primary key,
      organization_id uuid not null,
      name text not null,
      name_search text not null,
      version integer not null
    );
    comment on table schedule_customers is
      'newest name of each customer as the schedules projector read it from the customer events; schedules take their customer_name from it'`.execute(db);
  // Streams `customer-<id>`, from the last backwards, by pages.
  let before: string | null = null;
  for (;;) {
    const { rows } = await sql<{ stream_id: string; id: string; organization_id: string; name: string; version: string }>`
      select distinct on (stream_id) stream_id, data->'customer'->>'id' as id, metadata->>'organization_id' as organization_id,
             data->'customer'->>'name' as name, revision::text as version
        from es_events
       where stream_id like 'customer-%' and (${before}::text is null or stream_id < ${before})
       order by stream_id desc, revision desc
       limit 5000`.execute(db);
    if (rows.length === 0) break;
    await db
      .insertInto('schedule_customers')
      .values(rows.map((c) => ({ id: c.id, organization_id: c.organization_id, name: c.name, name_search: foldForSearch(c.name), version: Number(c.version) })))
      .execute();
    before = rows[rows.length - 1].stream_id;
  }
  await sql`
    update recurring_schedules r
       set customer_name = c.name, customer_search = c.name_search, customer_version = c.version
      from schedule_customers c
     where c.id = r.customer_id and c.organization_id = r.organization_id`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table schedule_customers`.execute(db);
}
