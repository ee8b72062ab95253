import { sql, type Kysely } from 'kysely';

/**
 * invoice_issue_month_counts: how many invoices each organization has per
 * month of issue date and status, in 16 slots (the invoice id's last byte,
 * modulo 16, so that inline writes of one month do not all wait for one
 * row). The invoices projector keeps it in the same statement as the
 * invoices rows (src/projections/invoices.ts); a list filtered by issue
 * date sums whole months from it and counts only the partial months at its
 * edges from the index (src/queries/invoices.ts, docs/performance.md
 * "Lists by issue date"). A draft can move to another month, so a row whose
 * count falls to zero is deleted: the table holds exactly the non-zero
 * counts, whatever the order and batching of the events (live, inline or
 * rebuilt), which `projections verify` relies on. Filled here from the
 * invoices table by `recount`, which the tests and benchmarks that write
 * invoices rows directly use too.
 */
export async function recount(db: Kysely<any>): Promise<void> {
  await sql`delete from invoice_issue_month_counts`.execute(db);
  await sql`
    insert into invoice_issue_month_counts (organization_id, month, status, slot, invoices)
    select organization_id, date_trunc('month', issue_date)::date, status, get_byte(uuid_send(id), 15) % 16, count(*)
    from invoices group by 1, 2, 3, 4`.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table invoice_issue_month_counts (
      organization_id uuid not null,
      month date not null,
      status text not null,
      slot smallint not null,
      invoices integer not null,
      primary key (organization_id, month, status, slot))`.execute(db);
  await recount(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table invoice_issue_month_counts`.execute(db);
}
