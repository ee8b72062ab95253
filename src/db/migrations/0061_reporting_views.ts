/**
 * Reporting views for analysts (docs/read-models.md, column by column):
 * invoice_register (+ invoice_register_continuity), vat_by_period,
 * receivables_aging, customer_statement. Plain SQL over the read models, no
 * state of their own. security_invoker: a view reads its tables with the
 * rights of whoever queries it, so the row-level security of analyst logins
 * (migration 0062) applies through the views too.
 *
 * "Today" and month boundaries are those of Africa/Casablanca
 * (docs/api-decisions.md). Drafts have no number and are in none of these views; void
 * invoices keep their number in the register and are excluded from VAT and
 * receivables.
 */
import { sql, type Kysely } from 'kysely';

/**
 * "Today" and a payment's calendar day as this migration computed them, with
 * PostgreSQL's own time zone data (migration 0108 takes them from the
 * service's instead, and its down puts these back).
 */
export const PG_TODAY = `(now() at time zone 'Africa/Casablanca')::date`;
export const PG_PAYMENT_DAY = `i.paid_at at time zone 'Africa/Casablanca'`;

type Create = 'create view' | 'create or replace view';

/** vat_by_period; `paymentDay`: the calendar day of `i.paid_at`. */
export function vatByPeriodView(create: Create, paymentDay: string): string {
  return `
    ${create} vat_by_period with (security_invoker = true) as
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
    group by i.organization_id, 3, b.rate, i.currency;`;
}

/** receivables_aging; `asOf`: today's date. */
export function receivablesAgingView(create: Create, asOf: string): string {
  return `
    ${create} receivables_aging with (security_invoker = true) as
    with open as (
      select i.*,
             ${asOf} as as_of,
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
    create view invoice_register with (security_invoker = true) as
    select i.organization_id,
           split_part(i.invoice_number, '-', 2)::int as year,
           split_part(i.invoice_number, '-', 3)::int as sequence,
           i.invoice_number,
           i.id as invoice_id,
           i.status,
           i.issue_date,
           i.due_date,
           i.customer_id,
           i.customer_name,
           i.customer_ice,
           i.currency,
           i.subtotal,
           i.total_tax,
           i.total,
           i.amount_due,
           i.finalized_at,
           i.paid_at,
           i.voided_at,
           i.void_reason
    from invoices i
    where i.invoice_number is not null
    order by i.organization_id, 2, 3;

    -- Every hole and every duplicate in the numbering of each organization and year: none, ever.
    create view invoice_register_continuity with (security_invoker = true) as
    with years as (
      select organization_id, year, max(sequence) as last_sequence from invoice_register group by organization_id, year
    )
    select y.organization_id, y.year, s.sequence, 'gap'::text as problem, 0 as occurrences
    from years y cross join lateral generate_series(1, y.last_sequence) as s(sequence)
    where not exists (select 1 from invoice_register r where r.organization_id = y.organization_id and r.year = y.year and r.sequence = s.sequence)
    union all
    select organization_id, year, sequence, 'duplicate', count(*)::int
    from invoice_register group by organization_id, year, sequence having count(*) > 1;

    ${sql.raw(vatByPeriodView('create view', PG_PAYMENT_DAY))}

    ${sql.raw(receivablesAgingView('create view', PG_TODAY))}

    create view customer_statement with (security_invoker = true) as
    select i.organization_id, i.customer_id, (array_agg(i.customer_name order by i.issue_date desc, i.invoice_number desc))[1] as customer_name,
           i.currency,
           count(*)::int as invoices,
           sum(i.total) as invoiced,
           coalesce(sum(i.total) filter (where i.status = 'paid'), 0) as paid,
           coalesce(sum(i.total) filter (where i.status = 'void'), 0) as voided,
           coalesce(sum(i.amount_due) filter (where i.status in ('finalized', 'sent')), 0) as outstanding,
           max(i.issue_date) as last_issue_date
    from invoices i
    where i.invoice_number is not null
    group by i.organization_id, i.customer_id, i.currency;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop view customer_statement, receivables_aging, vat_by_period, invoice_register_continuity, invoice_register`.execute(db);
}
