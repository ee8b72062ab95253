/**
 * Invoice events (stream `invoice-<id>`). Every event carries the full invoice
 * representation of docs/api-decisions.md "Representations" (without the embedded `customer`) as of
 * that event under data.invoice: webhooks publish it verbatim, projectors
 * upsert it, and `version` is the revision of that very event.
 */
import type { DomainEvent } from '../shared/decider.ts';
import type { InvoiceCustomer } from './commands.ts';
import type { TaxBreakdownEntry } from './totals.ts';

export const INVOICE_STATUSES = ['draft', 'finalized', 'sent', 'paid', 'void'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

export interface InvoiceLine {
  /** 1-based order of the line on the invoice. */
  position: number;
  description: string;
  /** Canonical decimal strings (docs/money.md): "3", "0.335", "20". */
  quantity: string;
  unit_price: string;
  tax_rate: string;
  /** Net amount (HT) with the currency's minor units. */
  total: string;
}

/** The public invoice representation (docs/api-decisions.md "Representations") minus `customer`. */
export interface Invoice {
  id: string;
  invoice_number: string | null;
  status: InvoiceStatus;
  customer_id: string;
  customer_name: string;
  currency: string;
  issue_date: string;
  due_date: string | null;
  payment_terms: string | null;
  notes: string | null;
  internal_notes: string | null;
  items: InvoiceLine[];
  subtotal: string;
  total_tax: string;
  total: string;
  tax_breakdown: TaxBreakdownEntry[];
  amount_due: string;
  finalized_at: string | null;
  sent_at: string | null;
  paid_at: string | null;
  payment_method: string | null;
  payment_reference: string | null;
  voided_at: string | null;
  void_reason: string | null;
  created_at: string;
  updated_at: string;
  /** Revision of this event in the invoice stream (created = 0). */
  version: number;
}

export type InvoiceCreated = DomainEvent<'InvoiceCreated', { invoice: Invoice }>;
export type InvoiceUpdated = DomainEvent<'InvoiceUpdated', { invoice: Invoice; changed_fields: string[] }>;
/**
 * Internal (not published): the draft is locked and was valid for issue.
 * `customer` is the buyer as validated, frozen for the legal document.
 */
export type InvoiceFinalizationStarted = DomainEvent<
  'InvoiceFinalizationStarted',
  { invoice: Invoice; customer: InvoiceCustomer }
>;
/** The official number is on the invoice; published as invoice.finalized. */
export type InvoiceFinalized = DomainEvent<'InvoiceFinalized', { invoice: Invoice; customer: InvoiceCustomer }>;
export type InvoiceSent = DomainEvent<'InvoiceSent', { invoice: Invoice }>;
export type InvoicePaid = DomainEvent<'InvoicePaid', { invoice: Invoice }>;
export type InvoiceVoided = DomainEvent<'InvoiceVoided', { invoice: Invoice; reason: string }>;

export type InvoiceEvent =
  | InvoiceCreated
  | InvoiceUpdated
  | InvoiceFinalizationStarted
  | InvoiceFinalized
  | InvoiceSent
  | InvoicePaid
  | InvoiceVoided;

export const INVOICE_EVENT_TYPES = [
  'InvoiceCreated',
  'InvoiceUpdated',
  'InvoiceFinalizationStarted',
  'InvoiceFinalized',
  'InvoiceSent',
  'InvoicePaid',
  'InvoiceVoided',
] as const;

export function invoiceStream(invoiceId: string): string {
  return `invoice-${invoiceId}`;
}
