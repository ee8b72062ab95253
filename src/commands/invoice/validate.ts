/**
 * Domain rules of invoice commands (docs/api-decisions.md "Identifiers, dates and money", "Invoice lifecycle", "Customers"). Readers
 * collect every field problem and throw one VALIDATION_ERROR; limits are
 * listed in docs/domain-rules.md.
 */
import { DEFAULT_CURRENCY, Decimal, isSupportedCurrency } from '../../shared/money.ts';
import { FieldErrors, isCalendarDate, readPastDatetime, readText } from '../field-rules.ts';
import type { CreateInvoice, InvoiceCustomer, InvoicePatch, OrganizationFacts, PayInvoice } from './commands.ts';
import type { Invoice } from './events.ts';
import { readLines, type LineValues } from './lines.ts';

export const INVOICE_LIMITS = { payment_terms: 500, notes: 5000, internal_notes: 5000, payment_method: 100, payment_reference: 200, void_reason: 500 } as const;

/** Client-written header fields, normalized. */
export interface HeaderValues {
  customer_id: string;
  customer_name: string;
  issue_date: string;
  due_date: string | null;
  currency: string;
  payment_terms: string | null;
  notes: string | null;
  internal_notes: string | null;
}

/** customer_id must name an active customer of the organization (sections 4 and 10). */
function checkCustomer(errors: FieldErrors, customerId: unknown, customer: InvoiceCustomer | null | undefined): void {
  if (typeof customerId !== 'string' || customerId === '') errors.add('customer_id', 'is required');
  else if (!customer || customer.id !== customerId) errors.add('customer_id', 'must name an existing customer');
  else if (customer.status === 'archived') errors.add('customer_id', 'customer is archived');
  else if (customer.status === 'inactive') errors.add('customer_id', 'customer is inactive');
}

function readDate(errors: FieldErrors, field: string, value: unknown, required: boolean): string | null {
  if (value === undefined || value === null) {
    if (required) errors.add(field, 'is required');
    return null;
  }
  if (!isCalendarDate(value)) errors.add(field, 'must be a calendar date (YYYY-MM-DD)');
  return value as string;
}

function readCurrency(errors: FieldErrors, value: unknown): string {
  if (value === undefined) return DEFAULT_CURRENCY;
  if (!isSupportedCurrency(value)) errors.add('currency', 'must be a supported ISO 4217 currency code');
  return value as string;
}

const text = (errors: FieldErrors, field: keyof typeof INVOICE_LIMITS, value: unknown, keepWhitespace = false) =>
  readText(errors, field, value, { max: INVOICE_LIMITS[field], keepWhitespace }) ?? null;

/** CreateInvoice: the whole draft. A due_date before issue_date is only refused at finalize. */
export function readNewInvoice(data: CreateInvoice['data']): { header: HeaderValues; lines: LineValues[] } {
  const errors = new FieldErrors();
  checkCustomer(errors, data.customer_id, data.customer);
  const header: HeaderValues = {
    customer_id: data.customer_id,
    customer_name: data.customer?.name ?? '',
    issue_date: readDate(errors, 'issue_date', data.issue_date, true) as string,
    due_date: readDate(errors, 'due_date', data.due_date, false),
    currency: readCurrency(errors, data.currency),
    payment_terms: text(errors, 'payment_terms', data.payment_terms),
    notes: text(errors, 'notes', data.notes, true),
    internal_notes: text(errors, 'internal_notes', data.internal_notes, true),
  };
  const lines = readLines(errors, data.items);
  errors.throwIfAny();
  return { header, lines };
}

/** UpdateInvoice: only keys present are read; `lines` is set when items are replaced. */
export function readInvoicePatch(
  patch: InvoicePatch,
  customer: InvoiceCustomer | null | undefined,
): Partial<HeaderValues> & { lines?: LineValues[] } {
  const errors = new FieldErrors();
  const has = (key: keyof InvoicePatch) => patch[key] !== undefined;
  const out: Partial<HeaderValues> & { lines?: LineValues[] } = {};
  if (has('customer_id')) {
    checkCustomer(errors, patch.customer_id, customer);
    out.customer_id = patch.customer_id;
    out.customer_name = customer?.name ?? '';
  }
  if (has('issue_date')) out.issue_date = readDate(errors, 'issue_date', patch.issue_date, true) as string;
  if (has('due_date')) out.due_date = readDate(errors, 'due_date', patch.due_date, false);
  if (has('currency')) out.currency = readCurrency(errors, patch.currency);
  if (has('payment_terms')) out.payment_terms = text(errors, 'payment_terms', patch.payment_terms);
  if (has('notes')) out.notes = text(errors, 'notes', patch.notes, true);
  if (has('items')) out.lines = readLines(errors, patch.items);
  errors.throwIfAny();
  return out;
}

/**
 * Can this draft legally be issued? (docs/api-decisions.md "Invoice lifecycle", finalize.) Every
 * failed condition is one field of the VALIDATION_ERROR.
 */
export function checkIssuable(invoice: Invoice, customer: InvoiceCustomer | null, organization: OrganizationFacts): void {
  const errors = new FieldErrors();
  if (invoice.items.length === 0) errors.add('items', 'must contain at least one line');
  else if (!new Decimal(invoice.total).gt(0)) errors.add('total', 'must be greater than 0');
  if (invoice.due_date !== null && invoice.due_date < invoice.issue_date) {
    errors.add('due_date', 'must not be before issue_date');
  }
  checkCustomer(errors, invoice.customer_id, customer);
  if (customer && customer.type === 'b2b' && !customer.ice) {
    errors.add('customer.ice', 'is required to invoice a B2B customer');
  }
  if (!organization.legal_name?.trim()) errors.add('organization.legal_name', 'is required to issue an invoice');
  if (!organization.ice?.trim()) errors.add('organization.ice', 'is required to issue an invoice');
  errors.throwIfAny();
}

/** PayInvoice body; paid_at defaults to the command's time and may not lie in its future (beyond clock skew). */
export function readPayment(data: PayInvoice['data'], now: string): Pick<Invoice, 'paid_at' | 'payment_method' | 'payment_reference'> {
  const errors = new FieldErrors();
  const payment = {
    paid_at: readPastDatetime(errors, 'paid_at', data.paid_at, now) ?? now,
    payment_method: text(errors, 'payment_method', data.payment_method),
    payment_reference: text(errors, 'payment_reference', data.payment_reference),
  };
  errors.throwIfAny();
  return payment;
}

/** VoidInvoice: reason is required, 1..500 characters. */
export function readVoidReason(reason: unknown): string {
  const errors = new FieldErrors();
  const value = readText(errors, 'reason', reason, { required: true, max: INVOICE_LIMITS.void_reason });
  errors.throwIfAny();
  return value as string;
}
