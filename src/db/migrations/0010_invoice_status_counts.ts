import { sql, type Kysely } from 'kysely';

/**
 * invoice_status_counts: how many invoices each organization has per status,
 * kept by the invoices projector (src/projections/invoices.ts) in the same
 * transaction as the rows. GET /invoices reports an exact total on every
 * page; counting 100,000 index entries per request costs milliseconds of
 * database CPU each, this lookup microseconds (docs/performance.md).
 * A status whose count falls to zero has no row, so the table is the same
 * whichever way the events were batched (live or rebuilt).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table invoice_status_counts (
      organization_id uuid not null,
      status text not null,
      invoices integer not null,
      primary key (organization_id, status)
    );
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table invoice_status_counts`.execute(db);
}
