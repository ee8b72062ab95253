/**
 * Lists filtered by issue date (src/queries/invoices.ts `listByIssueDate`,
 * docs/performance.md "Lists by issue date"): the index on
 * (organization_id, issue_date) also carries created_at and id (and status,
 * which lists filter on too), so the "range first" plan reads a range's
 * (id, created_at) from the index alone (an index-only scan) and sorts it,
 * without visiting the table's rows. Built like every migration at start-up,
 * not CONCURRENTLY: on a large invoices table, writes to it wait for the
 * build.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index invoices_org_issue_date_created on invoices (organization_id, issue_date, created_at, id) include (status)`.execute(db);
  await sql`drop index invoices_org_issue_date`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index invoices_org_issue_date on invoices (organization_id, issue_date)`.execute(db);
  await sql`drop index invoices_org_issue_date_created`.execute(db);
}
