/**
 * Read model `invoices` (+ `invoice_lines`, `invoice_tax_breakdown`, and
 * `invoice_status_counts` for the lists' totals): one row
 * per invoice stream. Every invoice event carries the whole invoice, so a
 * batch collapses to the newest snapshot of each invoice, written with a
 * version guard: a batch applied twice, or replayed by a rebuild, changes
 * nothing. Lines and breakdown are rewritten only for rows that moved.
 * Set-based statements (one upsert, one delete and one unnest insert per
 * table and batch) keep a replay of a busy year fast.
 */
import { sql, type Transaction } from 'kysely';
import type { InvoiceCustomer } from '../commands/invoice/commands.ts';
import { INVOICE_EVENT_TYPES, type Invoice, type InvoiceEvent } from '../commands/invoice/events.ts';
import type { RecordedEvent } from '../eventstore/types.ts';
import type { Projector } from './projector.ts';

interface Latest {
  organizationId: string;
  invoice: Invoice;
  pending: boolean;
  /** The buyer frozen by the newest finalization event of the batch, if any. */
  customer: InvoiceCustomer | null;
}

function newestPerInvoice(events: RecordedEvent[]): Latest[] {
  const newest = new Map<string, Latest>();
  for (const e of events) {
    const event = e as unknown as InvoiceEvent;
    const { invoice } = event.data;
    const customer = 'customer' in event.data ? event.data.customer : null;
    const known = newest.get(invoice.id);
    if (known && known.invoice.version >= invoice.version) continue;
    newest.set(invoice.id, {
      organizationId: String(e.metadata.organization_id),
      invoice,
      // Only InvoiceFinalized can follow the lock, so "pending" is "the newest event is the lock".
      pending: event.type === 'InvoiceFinalizationStarted',
      customer: customer ?? known?.customer ?? null,
    });
  }
  return [...newest.values()];
}

function row({ organizationId, invoice: i, pending, customer: c }: Latest) {
  return {
    id: i.id,
    organization_id: organizationId,
    invoice_number: i.invoice_number,
    status: i.status,
    finalization_pending: pending,
    customer_id: i.customer_id,
    customer_name: i.customer_name,
    customer_type: c?.type ?? null,
    customer_ice: c?.ice ?? null,
    customer_email: c?.email ?? null,
    customer_phone: c?.phone ?? null,
    customer_address_street: c?.address.street ?? null,
    customer_address_city: c?.address.city ?? null,
    customer_address_postal_code: c?.address.postal_code ?? null,
    customer_address_country: c?.address.country ?? null,
    currency: i.currency,
    issue_date: i.issue_date,
    due_date: i.due_date,
    payment_terms: i.payment_terms,
    notes: i.notes,
    internal_notes: i.internal_notes,
    subtotal: i.subtotal,
    total_tax: i.total_tax,
    total: i.total,
    amount_due: i.amount_due,
    finalized_at: i.finalized_at,
    sent_at: i.sent_at,
    paid_at: i.paid_at,
    payment_method: i.payment_method,
    payment_reference: i.payment_reference,
    voided_at: i.voided_at,
    void_reason: i.void_reason,
    created_at: i.created_at,
    updated_at: i.updated_at,
    version: i.version,
  };
}

type Row = ReturnType<typeof row>;
/** Frozen buyer columns: events after the finalization do not carry the buyer, so keep what is stored. */
const KEPT_WHEN_NULL = new Set([
  'customer_type', 'customer_ice', 'customer_email', 'customer_phone',
  'customer_address_street', 'customer_address_city', 'customer_address_postal_code', 'customer_address_country',
]);
const CHUNK = 1000; // 36 parameters per row stay far below PostgreSQL's 65,535

async function upsertInvoices(trx: Transaction<any>, rows: Row[]): Promise<string[]> {
  const moved: string[] = [];
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    const result = await trx
      .insertInto('invoices')
      .values(chunk)
      .onConflict((oc) =>
        oc
          .column('id')
          .doUpdateSet((eb) =>
            Object.fromEntries(
              Object.keys(chunk[0])
                .filter((c) => c !== 'id')
                .map((c) => [c, KEPT_WHEN_NULL.has(c) ? eb.fn.coalesce(eb.ref(`excluded.${c}`), eb.ref(`invoices.${c}`)) : eb.ref(`excluded.${c}`)]),
            ),
          )
          .where(sql<boolean>`invoices.version < excluded.version`),
      )
      .returning('id')
      .execute();
    moved.push(...result.map((r) => r.id as string));
  }
  return moved;
}

async function rewriteLines(trx: Transaction<any>, latest: Latest[]): Promise<void> {
  const ids = latest.map((l) => l.invoice.id);
  await sql`delete from invoice_lines where invoice_id = any(${ids}::uuid[])`.execute(trx);
  await sql`delete from invoice_tax_breakdown where invoice_id = any(${ids}::uuid[])`.execute(trx);
  const lines = latest.flatMap((l) => l.invoice.items.map((item) => ({ ...item, invoice_id: l.invoice.id, organization_id: l.organizationId })));
  if (lines.length > 0) {
    const col = <K extends keyof (typeof lines)[0]>(k: K) => lines.map((l) => l[k]);
    await sql`
      insert into invoice_lines (invoice_id, organization_id, position, description, quantity, unit_price, tax_rate, total)
      select * from unnest(${col('invoice_id')}::uuid[], ${col('organization_id')}::uuid[], ${col('position')}::int[],
                           ${col('description')}::text[], ${col('quantity')}::numeric[], ${col('unit_price')}::numeric[],
                           ${col('tax_rate')}::numeric[], ${col('total')}::numeric[])`.execute(trx);
  }
  const taxes = latest.flatMap((l) => l.invoice.tax_breakdown.map((t) => ({ ...t, invoice_id: l.invoice.id, organization_id: l.organizationId })));
  if (taxes.length > 0) {
    const col = <K extends keyof (typeof taxes)[0]>(k: K) => taxes.map((t) => t[k]);
    await sql`
      insert into invoice_tax_breakdown (invoice_id, organization_id, rate, taxable_amount, tax_amount)
      select * from unnest(${col('invoice_id')}::uuid[], ${col('organization_id')}::uuid[], ${col('rate')}::numeric[],
                           ${col('taxable_amount')}::numeric[], ${col('tax_amount')}::numeric[])`.execute(trx);
  }
}

/** The statuses stored before this batch, to move invoice_status_counts. */
async function storedStatuses(trx: Transaction<any>, ids: string[]): Promise<Map<string, string>> {
  const { rows } = await sql<{ id: string; status: string }>`select id, status from invoices where id = any(${ids}::uuid[])`.execute(trx);
  return new Map(rows.map((r) => [r.id, r.status]));
}

/** Moves the per-status counts by what the batch changed; a count at zero loses its row. */
async function moveCounts(trx: Transaction<any>, changed: Latest[], before: Map<string, string>): Promise<void> {
  const delta = new Map<string, { organization_id: string; status: string; invoices: number }>();
  const add = (organization_id: string, status: string, n: number) => {
    const key = `${organization_id} ${status}`;
    const d = delta.get(key) ?? { organization_id, status, invoices: 0 };
    d.invoices += n;
    delta.set(key, d);
  };
  for (const l of changed) {
    const old = before.get(l.invoice.id);
    if (old === l.invoice.status) continue;
    if (old !== undefined) add(l.organizationId, old, -1);
    add(l.organizationId, l.invoice.status, 1);
  }
  const rows = [...delta.values()].filter((d) => d.invoices !== 0);
  if (rows.length === 0) return;
  const col = <K extends keyof (typeof rows)[0]>(k: K) => rows.map((r) => r[k]);
  await sql`
    insert into invoice_status_counts (organization_id, status, invoices)
    select * from unnest(${col('organization_id')}::uuid[], ${col('status')}::text[], ${col('invoices')}::int[])
    on conflict (organization_id, status) do update set invoices = invoice_status_counts.invoices + excluded.invoices`.execute(trx);
  await sql`delete from invoice_status_counts where invoices = 0 and organization_id = any(${col('organization_id')}::uuid[])`.execute(trx);
}

export const invoicesProjector: Projector = {
  name: 'invoices',
  handles: INVOICE_EVENT_TYPES,
  tables: ['invoices', 'invoice_lines', 'invoice_tax_breakdown', 'invoice_status_counts'],
  async apply(events: RecordedEvent[], trx: Transaction<any>): Promise<void> {
    const latest = newestPerInvoice(events);
    if (latest.length === 0) return;
    const before = await storedStatuses(trx, latest.map((l) => l.invoice.id));
    const moved = new Set(await upsertInvoices(trx, latest.map(row)));
    const changed = latest.filter((l) => moved.has(l.invoice.id));
    if (changed.length === 0) return;
    await rewriteLines(trx, changed);
    await moveCounts(trx, changed, before);
  },
};
