/**
 * Reads of the invoices read model (GET /invoices, GET /invoices/{id}, and
 * the responses of writes once projected). Every query is scoped by
 * organization: another organization's invoice is simply not found.
 *
 * One round trip per read: lines and tax breakdown come as JSON aggregates
 * with every numeric cast to text, so no amount ever passes through a JS
 * number; src/queries/invoice-rows.ts formats them back with the currency's
 * minor units. A list runs its page and its count in parallel; the count
 * of a status-only list comes from invoice_status_counts.
 */
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { InvoiceStatus } from '../commands/invoice/events.ts';
import type { Invoice } from '../commands/invoice/events.ts';
import { toInvoice, toInvoiceView, type InvoiceView } from './invoice-rows.ts';

const ITEMS = sql<unknown[]>`coalesce((
  select json_agg(json_build_object(
    'position', l.position, 'description', l.description, 'quantity', l.quantity::text,
    'unit_price', l.unit_price::text, 'tax_rate', l.tax_rate::text, 'total', l.total::text) order by l.position)
  from invoice_lines l where l.invoice_id = i.id), '[]'::json)`;

const TAX_BREAKDOWN = sql<unknown[]>`coalesce((
  select json_agg(json_build_object(
    'rate', b.rate::text, 'taxable_amount', b.taxable_amount::text, 'tax_amount', b.tax_amount::text) order by b.rate desc)
  from invoice_tax_breakdown b where b.invoice_id = i.id), '[]'::json)`;

function invoiceColumns<QB extends SelectQueryBuilder<any, any, any>>(qb: QB) {
  return qb
    .selectAll('i') // numeric columns arrive as strings (pg's default), never as JS numbers
    .select([ITEMS.as('items'), TAX_BREAKDOWN.as('tax_breakdown')]);
}

/** A single invoice with its `customer` (CONTRACT section 5), or null. */
export async function getInvoice(db: Kysely<any>, organizationId: string, invoiceId: string): Promise<InvoiceView | null> {
  const row = await invoiceColumns(
    db
      .selectFrom('invoices as i')
      .leftJoin('customers as c', (j) => j.onRef('c.id', '=', 'i.customer_id').onRef('c.organization_id', '=', 'i.organization_id')),
  )
    .select([
      'c.name as c_name', 'c.type as c_type', 'c.ice as c_ice', 'c.email as c_email', 'c.phone as c_phone',
      'c.address_street as c_address_street', 'c.address_city as c_address_city',
      'c.address_postal_code as c_address_postal_code', 'c.address_country as c_address_country',
    ])
    .where('i.organization_id', '=', organizationId)
    .where('i.id', '=', invoiceId.toLowerCase())
    .executeTakeFirst();
  return row ? toInvoiceView(row) : null;
}

export interface InvoiceListQuery {
  page: number;
  per_page: number;
  order: 'asc' | 'desc';
  status?: InvoiceStatus;
  customer_id?: string;
  /** Inclusive bounds on issue_date (YYYY-MM-DD). */
  date_from?: string;
  date_to?: string;
}

export interface InvoicePage {
  data: Invoice[];
  total: number;
}

export async function listInvoices(db: Kysely<any>, organizationId: string, q: InvoiceListQuery): Promise<InvoicePage> {
  let base = db.selectFrom('invoices as i').where('i.organization_id', '=', organizationId);
  if (q.status) base = base.where('i.status', '=', q.status);
  if (q.customer_id) base = base.where('i.customer_id', '=', q.customer_id.toLowerCase());
  if (q.date_from) base = base.where('i.issue_date', '>=', q.date_from);
  if (q.date_to) base = base.where('i.issue_date', '<=', q.date_to);
  const page = invoiceColumns(base)
    .orderBy('i.created_at', q.order)
    .orderBy('i.id', q.order)
    .limit(q.per_page)
    .offset((q.page - 1) * q.per_page)
    .execute();
  const onlyStatus = !q.customer_id && !q.date_from && !q.date_to;
  const count = onlyStatus ? statusCount(db, organizationId, q.status) : base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const [rows, { n }] = await Promise.all([page, count]);
  return { data: rows.map(toInvoice), total: Number(n) };
}

/**
 * The total of a list filtered by status only (or not at all), from the
 * counts the projector keeps: exact, and O(statuses) instead of a scan of
 * the organization's invoices. Other filters count the matching rows.
 */
function statusCount(db: Kysely<any>, organizationId: string, status: InvoiceStatus | undefined): Promise<{ n: string | number }> {
  let q = db
    .selectFrom('invoice_status_counts')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('invoices'), sql<number>`0`).as('n'))
    .where('organization_id', '=', organizationId);
  if (status) q = q.where('status', '=', status);
  return q.executeTakeFirstOrThrow();
}
