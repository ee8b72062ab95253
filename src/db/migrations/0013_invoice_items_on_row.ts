/**
 * invoices.items and invoices.tax_breakdown: the invoice's lines and tax
 * breakdown as JSON on its own row (the snapshot's, canonical decimal
 * strings), written by the invoices projector with the rest of the row.
 * Reads (GET /invoices/{id}, every write's answer, lists) then take one row
 * per invoice instead of two aggregate subqueries each (docs/performance.md).
 * invoice_lines and invoice_tax_breakdown stay, for analysts' SQL.
 * Rows projected before this migration get their lines from those tables
 * (numeric text, formatted alike by the API; a rebuild writes the events').
 */
import { sql, type Kysely } from 'kysely';

/** Fills both columns from the line tables (exported for the test that compares it with the projector). */
export const backfill = sql`
    update invoices i set
      items = coalesce((select jsonb_agg(jsonb_build_object(
          'position', l.position, 'description', l.description, 'quantity', l.quantity::text,
          'unit_price', l.unit_price::text, 'tax_rate', l.tax_rate::text, 'total', l.total::text) order by l.position)
        from invoice_lines l where l.invoice_id = i.id), '[]'),
      tax_breakdown = coalesce((select jsonb_agg(jsonb_build_object(
          'rate', b.rate::text, 'taxable_amount', b.taxable_amount::text, 'tax_amount', b.tax_amount::text) order by b.rate desc)
        from invoice_tax_breakdown b where b.invoice_id = i.id), '[]')`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table invoices
      add column items jsonb not null default '[]',
      add column tax_breakdown jsonb not null default '[]'`.execute(db);
  await backfill.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table invoices drop column items, drop column tax_breakdown`.execute(db);
}
