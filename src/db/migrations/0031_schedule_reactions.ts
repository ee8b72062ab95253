import { sql, type Kysely } from 'kysely';

/**
 * schedule_reactions: the outbox of the schedules' reactions to other
 * aggregates' events (src/workers/schedule-reactions.ts). A checkpointed log
 * consumer inserts one row per event that calls for one (a customer archived:
 * cancel its schedules; an organization restored: skip what fell due while it
 * was archived) in its checkpoint's transaction; the worker then runs the
 * commands and deletes the row. A row is never lost and running it twice
 * changes nothing (both commands are idempotent).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table schedule_reactions (
      event_id uuid primary key,
      kind text not null,
      organization_id uuid not null,
      subject_id uuid not null,
      position text not null,
      occurred_at timestamptz not null,
      attempts integer not null default 0,
      last_error text
    );
    comment on column schedule_reactions.kind is 'customer_archived | organization_restored';
    comment on column schedule_reactions.subject_id is 'the customer or the organization';
    create index schedule_reactions_org on schedule_reactions (organization_id);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table schedule_reactions`.execute(db);
}
