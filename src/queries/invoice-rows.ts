/**
 * Read-model rows -> the invoice representation of docs/api-decisions.md "Representations",
 * field for field the snapshot the events carry (test/invoices checks that
 * GET equals the last event's data.invoice). Numerics arrive as strings:
 * amounts get the currency's minor units, line inputs their canonical form.
 */
import type { InvoiceCustomer } from '../commands/invoice/commands.ts';
import type { Invoice, InvoiceLine } from '../commands/invoice/events.ts';
import type { TaxBreakdownEntry } from '../commands/invoice/totals.ts';
import { canonicalDecimal, formatAmount, minorUnits } from '../shared/money.ts';
import { isoOrNull as iso } from '../shared/time.ts';

/** The customer object of a single read (InvoiceCustomer without its status). */
export type InvoiceViewCustomer = Omit<InvoiceCustomer, 'status'>;

/** A single read: the invoice plus its customer. */
export type InvoiceView = Invoice & { customer: InvoiceViewCustomer | null };

/*
 * PostgreSQL sends numerics as plain decimal text ("1250.5000"), so the wire
 * formats are string surgery: exact, and much cheaper than decimal.js on a
 * list, which formats hundreds of values (docs/performance.md, "Invoices").
 * Anything unexpected takes the decimal path, which gives the same result.
 */
const PLAIN = /^\d+(\.\d+)?$/;

/** "1250.5000" -> "1250.5", "20.00" -> "20", "0.0000" -> "0" (canonicalDecimal). */
function canonical(text: string): string {
  if (!PLAIN.test(text)) return canonicalDecimal(text);
  if (!text.includes('.')) return text.replace(/^0+(?=\d)/, '');
  const trimmed = text.replace(/0+$/, '').replace(/\.$/, '');
  return trimmed.replace(/^0+(?=\d)/, '');
}

/** "1250.5000" -> "1250.50" for MAD: the stored amount already has the minor units (formatAmount). */
function amountText(text: string, digits: number, currency: string): string {
  const dot = text.indexOf('.');
  const int = dot === -1 ? text : text.slice(0, dot);
  const frac = dot === -1 ? '' : text.slice(dot + 1);
  if (!PLAIN.test(text) || /[^0]/.test(frac.slice(digits)) || (int.length > 1 && int[0] === '0')) return formatAmount(text, currency);
  return digits === 0 ? int : `${int}.${frac.slice(0, digits).padEnd(digits, '0')}`;
}


export function toInvoice(row: Record<string, any>): Invoice {
  const currency: string = row.currency;
  const digits = minorUnits(currency);
  const amount = (v: string) => amountText(v, digits, currency);
  return {
    id: row.id,
    invoice_number: row.invoice_number,
    status: row.status,
    customer_id: row.customer_id,
    customer_name: row.customer_name,
    currency,
    issue_date: row.issue_date,
    due_date: row.due_date,
    payment_terms: row.payment_terms,
    notes: row.notes,
    internal_notes: row.internal_notes,
    items: (row.items as InvoiceLine[]).map((l) => ({
      position: l.position,
      description: l.description,
      quantity: canonical(l.quantity),
      unit_price: canonical(l.unit_price),
      tax_rate: canonical(l.tax_rate),
      total: amount(l.total),
    })),
    subtotal: amount(row.subtotal),
    total_tax: amount(row.total_tax),
    total: amount(row.total),
    tax_breakdown: (row.tax_breakdown as TaxBreakdownEntry[]).map((t) => ({
      rate: canonical(t.rate),
      taxable_amount: amount(t.taxable_amount),
      tax_amount: amount(t.tax_amount),
    })),
    amount_due: amount(row.amount_due),
    finalized_at: iso(row.finalized_at),
    sent_at: iso(row.sent_at),
    paid_at: iso(row.paid_at),
    payment_method: row.payment_method,
    payment_reference: row.payment_reference,
    voided_at: iso(row.voided_at),
    void_reason: row.void_reason,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    version: row.version,
  };
}

/**
 * The buyer of an issued invoice is the one frozen at finalize (the legal
 * document must not change when the customer does); a draft shows the
 * customer as it is now (columns c_* of the join), or null if it is gone.
 */
function customerOf(row: Record<string, any>): InvoiceViewCustomer | null {
  const frozen = row.customer_type !== null;
  const p = frozen ? 'customer_' : 'c_';
  if (!frozen && row.c_type === null) return null;
  return {
    id: row.customer_id,
    name: frozen ? row.customer_name : row.c_name,
    type: row[`${p}type`],
    ice: row[`${p}ice`],
    email: row[`${p}email`],
    phone: row[`${p}phone`],
    address: {
      street: row[`${p}address_street`],
      city: row[`${p}address_city`],
      postal_code: row[`${p}address_postal_code`],
      country: row[`${p}address_country`],
    },
  };
}

export function toInvoiceView(row: Record<string, any>): InvoiceView {
  return withCustomer(toInvoice(row), customerOf(row));
}

/** `customer` sits beside customer_id / customer_name, as a reader expects it; one order for every answer. */
function withCustomer(invoice: Invoice, customer: InvoiceViewCustomer | null): InvoiceView {
  const { customer_name, ...rest } = invoice;
  const entries: [string, unknown][] = Object.entries(rest);
  const at = entries.findIndex(([k]) => k === 'currency');
  entries.splice(at, 0, ['customer_name', customer_name], ['customer', customer]);
  return Object.fromEntries(entries) as unknown as InvoiceView;
}

/**
 * The view of a decided snapshot: what a read of its row shows, member for
 * member and in the same order (an inline write answers it instead of
 * reading its row back; test/projections/inline.test.ts compares the bytes).
 * The snapshot goes through the row's own mapping: a state folded from
 * stored events has their members in the stored text's order (sorted), not
 * the representation's.
 */
export function viewOfSnapshot(invoice: Invoice, customer: InvoiceCustomer | null): InvoiceView {
  const a = customer?.address;
  const view: InvoiceViewCustomer | null = customer
    ? {
        id: customer.id,
        name: customer.name,
        type: customer.type,
        ice: customer.ice,
        email: customer.email,
        phone: customer.phone,
        address: { street: a!.street, city: a!.city, postal_code: a!.postal_code, country: a!.country },
      }
    : null;
  return withCustomer(toInvoice(invoice as unknown as Record<string, unknown>), view);
}
