import { sql, type Kysely } from 'kysely';

/**
 * Read models of the recurring schedules (projector
 * src/projections/schedules.ts; docs/recurring.md): one row per schedule,
 * one row per run of a schedule (its history). Flat columns for analysts;
 * `items` is the schedule's line template as jsonb (decimal strings).
 * The lattice columns (anchor_date, anchor_seq, seq) are what the API and the
 * scheduler compute run dates from.
 *
 * No generated columns and no defaults the projector relies on: a rebuild
 * copies rows with `insert ... select *` between identical tables.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table recurring_schedules (
      id uuid primary key,
      organization_id uuid not null,
      name text,
      customer_id uuid not null,
      customer_name text not null,
      frequency text not null,
      interval_count integer not null,
      day_of_month integer,
      day_of_week integer,
      start_date date not null,
      end_date date,
      max_occurrences integer,
      occurrences integer not null,
      next_run_date date,
      auto_finalize boolean not null,
      auto_send boolean not null,
      days_until_due integer not null,
      currency text not null,
      items jsonb not null,
      status text not null,
      anchor_date date not null,
      anchor_seq integer not null,
      seq integer not null,
      quota_slot integer not null,
      pending_failure jsonb,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      version integer not null,
      name_search text not null,
      customer_search text not null
    );
    comment on column recurring_schedules.status is 'active | paused | completed | cancelled';
    comment on column recurring_schedules.next_run_date is 'next run while active (null otherwise); the scheduler picks rows where it is <= today';
    comment on column recurring_schedules.seq is 'number of the next occurrence; run n falls on anchor_date + (n - anchor_seq) periods';
    comment on column recurring_schedules.pending_failure is 'the run of seq that failed on its own day and is retried that day';
    comment on column recurring_schedules.name_search is 'schedule name, folded for search (src/shared/search.ts)';
    comment on column recurring_schedules.customer_search is 'customer name, folded for search; kept current by the customer events';

    create index recurring_schedules_org_created on recurring_schedules (organization_id, created_at desc, id desc);
    create index recurring_schedules_org_status on recurring_schedules (organization_id, status, created_at desc, id desc);
    create index recurring_schedules_org_customer on recurring_schedules (organization_id, customer_id, created_at desc, id desc);
    create index recurring_schedules_org_frequency on recurring_schedules (organization_id, frequency, created_at desc, id desc);
    -- The scheduler: active schedules due by date.
    create index recurring_schedules_due on recurring_schedules (next_run_date, id) where status = 'active';
    -- Customer events rename the customer on its schedules.
    create index recurring_schedules_customer on recurring_schedules (customer_id);

    create table schedule_runs (
      id uuid primary key,
      organization_id uuid not null,
      schedule_id uuid not null,
      seq integer not null,
      run_date date not null,
      invoice_id uuid,
      invoice_number text,
      status text not null,
      error_code text,
      error_message text,
      -- schedule version of the event that wrote the row (a retried run updates its row)
      version integer not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      unique (schedule_id, seq)
    );
    comment on table schedule_runs is 'history of recurring schedules: one row per occurrence run (success or failed)';
    comment on column schedule_runs.status is 'success | failed';
    comment on column schedule_runs.invoice_number is 'null while the generated invoice is a draft (or the run failed)';
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table schedule_runs; drop table recurring_schedules`.execute(db);
}
