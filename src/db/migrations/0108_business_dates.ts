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
import { ANALYST_GROUP } from './0062_analyst_access.ts';

function views(today: string, paymentDay: string): string {
  return `
    create or replace view vat_by_period with (security_invoker = true) as
    select i.organization_id, 'issue'::text as basis, date_trunc('month', i.issue_date)::date as period,
           b.rate, i.currency, count(*)::int as invoices, sum(b.taxable_amount) as taxable_amount, sum(b.tax_amount) as tax_amount
    from invoices i join invoice_tax_breakdown b on b.invoice_id = i.id
    where i.status in ('finalized', 'sent', 'paid')
    group by i.organization_id, 3, b.rate, i.currency
    union all
    select i.organization_id, 'payment', date_trunc('month', ${paymentDay})::date,
           b.rate, i.currency, count(*)::int, sum(b.taxable_amount), sum(b.tax_amount)
    from invoices i join invoice_tax_breakdown b on b.invoice_id = i.id
    where i.status = 'paid'
    group by i.organization_id, 3, b.rate, i.currency;

    create or replace view receivables_aging with (security_invoker = true) as
    with open as (
      select i.*,
             (select ${today}) as as_of,
             least(coalesce(i.due_date - i.issue_date, 60), 120) as legal_term_days
      from invoices i
      where i.status in ('finalized', 'sent') and i.amount_due > 0
    )
    select o.organization_id, o.id as invoice_id, o.invoice_number, o.customer_id, o.customer_name, o.currency,
           o.issue_date, o.due_date, o.amount_due, o.as_of,
           greatest(o.as_of - coalesce(o.due_date, o.issue_date), 0) as days_past_due,
           case
             when o.as_of - coalesce(o.due_date, o.issue_date) <= 30 then '0-30'
             when o.as_of - coalesce(o.due_date, o.issue_date) <= 60 then '31-60'
             when o.as_of - coalesce(o.due_date, o.issue_date) <= 90 then '61-90'
             when o.as_of - coalesce(o.due_date, o.issue_date) <= 120 then '91-120'
             else 'over 120'
           end as bucket,
           o.legal_term_days,
           o.issue_date + o.legal_term_days as legal_deadline,
           o.as_of > o.issue_date + o.legal_term_days as beyond_legal_term,
           coalesce(o.due_date - o.issue_date > 120, false) as agreed_term_over_120
    from open o;`;
}

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
  await sql.raw(views('business_today()', 'business_date(i.paid_at)')).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(views(`(now() at time zone 'Africa/Casablanca')::date`, `i.paid_at at time zone 'Africa/Casablanca'`)).execute(db);
  await sql`drop function business_today(); drop function business_date(timestamptz); drop table business_utc_offsets`.execute(db);
}
