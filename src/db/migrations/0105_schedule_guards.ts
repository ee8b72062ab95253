import { sql, type Kysely } from 'kysely';

/**
 * The two writes of the schedules projector that a second application could
 * undo get guards, so that applying any event again, in any later stretch of
 * the log, changes nothing (docs/architecture.md "Inline projections"):
 *
 * - recurring_schedules.customer_version: the version (stream revision) of
 *   the customer that customer_name is from. A customer's event renames a row
 *   only when it is newer, so a rename applied again late never puts an older
 *   name back (the newest name and its version come from the projector's own
 *   table of customers, migration 0107, which also fills this column).
 * - schedule_tombstones: the schedules deleted, kept for good (a deleted
 *   schedule's id is never created again). A schedule event applied again
 *   after its ScheduleDeleted no longer brings the row back.
 *
 * The tombstones are filled here as a rebuild from the log would fill them,
 * from the ScheduleDeleted events (and the rows of a deleted schedule that
 * the earlier projector brought back, by applying its events again, go).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table recurring_schedules add column customer_version integer;
    comment on column recurring_schedules.customer_version is
      'version of the customer that customer_name is from; a customer event renames the row only when newer';
    create table schedule_tombstones (
      id uuid primary key,
      organization_id uuid not null,
      deleted_at timestamptz not null
    );
    comment on table schedule_tombstones is
      'deleted schedules: the projector never writes their rows again, whatever event of theirs it applies again';
    insert into schedule_tombstones (id, organization_id, deleted_at)
      select (data->>'schedule_id')::uuid, (metadata->>'organization_id')::uuid, created_at
      from es_events where type = 'ScheduleDeleted'
      on conflict do nothing;
    delete from schedule_runs where schedule_id in (select id from schedule_tombstones);
    delete from recurring_schedules where id in (select id from schedule_tombstones);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table schedule_tombstones; alter table recurring_schedules drop column customer_version`.execute(db);
}
