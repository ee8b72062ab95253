/**
 * The analysts' views take their calendar days from the service's time zone
 * data, not PostgreSQL's (src/shared/business-time.ts says why; found
 * 2026-11-27: between 23:00 and 24:00 UTC the views' "today" was a day ahead
 * of the API's).
 *
 * - business_utc_offsets: Africa/Casablanca's offset from UTC from each
 *   instant on, written by the service at every start from Node's data
 *   (src/db/business-offsets.ts, after the migrations), with the release of
 *   that data: a process with older data (an older Node beside the others)
 *   leaves them as they are.
 * - business_date(instant): the calendar day of an instant by those offsets;
 *   by PostgreSQL's own data only for an instant before the first row (or
 *   none written yet). business_today(): today's.
 * - receivables_aging (as_of, evaluated once per query) and vat_by_period
 *   (the month of a payment) use them; their columns are unchanged (create or
 *   replace keeps the grants).
 *
 * The functions are security invoker, as the views are: analysts read the
 * offsets table (granted here; it holds nothing of any organization).
 */
import { sql, type Kysely } from 'kysely';
import { PG_PAYMENT_DAY, PG_TODAY, receivablesAgingView, vatByPeriodView } from './0061_reporting_views.ts';
import { ANALYST_GROUP } from './0062_analyst_access.ts';

/** The two views that compute a day, on `today` and a payment's day (0061 writes them). */
const views = (today: string, paymentDay: string) =>
  vatByPeriodView('create or replace view', paymentDay) + receivablesAgingView('create or replace view', today);

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table business_utc_offsets (
      since timestamptz primary key,
      utc_offset interval not null,
      tzdata text not null
    );
    comment on table business_utc_offsets is
      'Africa/Casablanca''s offset from UTC from each instant on, as the service''s time zone data has it (written at each start)';
    comment on column business_utc_offsets.tzdata is 'The time zone data release the offsets come from (Node''s process.versions.tz): an older one never replaces them';
    grant select on business_utc_offsets to ${sql.raw(ANALYST_GROUP)};

    create function business_date(instant timestamptz) returns date language sql stable as $$
      select coalesce(
        ((instant at time zone 'UTC') + (select o.utc_offset from business_utc_offsets o where o.since <= instant order by o.since desc limit 1))::date,
        (instant at time zone 'Africa/Casablanca')::date)
    $$;
    alter function business_date(timestamptz) set search_path from current;
    comment on function business_date(timestamptz) is 'The calendar day of an instant in Africa/Casablanca, by business_utc_offsets';

    create function business_today() returns date language sql stable as $$ select business_date(now()) $$;
    alter function business_today() set search_path from current;
    comment on function business_today() is 'Today in Africa/Casablanca, by business_utc_offsets';
  `.execute(db);
  await sql.raw(views('(select business_today())', 'business_date(i.paid_at)')).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(views(PG_TODAY, PG_PAYMENT_DAY)).execute(db);
  await sql`drop function business_today(); drop function business_date(timestamptz); drop table business_utc_offsets`.execute(db);
}
