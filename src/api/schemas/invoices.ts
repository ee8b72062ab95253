/**
 * JSON schemas of the invoice endpoints: ajv validates requests with them and
 * OpenAPI shows them. Every object is closed by the pipeline, so an unknown
 * field (e.g. internal_notes on PATCH, which is create-only) is a
 * VALIDATION_ERROR. They fix shapes and types; the decider
 * (src/commands/invoice/validate.ts, lines.ts) checks the domain rules
 * (decimal places, bounds, blank text) with its own messages.
 */
import { INVOICE_STATUSES } from '../../commands/invoice/events.ts';
import { MAX_DESCRIPTION, MAX_LINES } from '../../commands/invoice/lines.ts';
import { INVOICE_LIMITS } from '../../commands/invoice/validate.ts';
import type { JsonSchema } from '../route.ts';
import { named, representation } from '../openapi-named.ts';
import { addressSchema } from './customers.ts';
import { pagingQuery } from './paging.ts';
import { CUSTOMER_TYPES } from '../../commands/customer/events.ts';

const text = (max: number, description?: string): JsonSchema => ({
  type: ['string', 'null'],
  maxLength: max,
  ...(description ? { description } : {}),
});

const decimalInput = (description: string): JsonSchema => ({
  type: ['number', 'string'],
  description: `${description} A JSON number or a numeric string; echoed as a decimal string.`,
});

const line: JsonSchema = named('InvoiceLineInput', {
  type: 'object',
  required: ['description', 'quantity', 'unit_price'],
  properties: {
    description: { type: 'string', minLength: 1, maxLength: MAX_DESCRIPTION },
    quantity: decimalInput('Greater than 0, at most 4 decimals.'),
    unit_price: decimalInput('At least 0, at most 4 decimals.'),
    tax_rate: { ...decimalInput('Percent, 0 to 100, at most 2 decimals; default 20.'), type: ['number', 'string', 'null'] },
  },
});

const items: JsonSchema = { type: 'array', maxItems: MAX_LINES, items: line, description: 'On PATCH, replaces every line.' };
/** Years 1000..9999: the number format INV-YYYY-NNNNNN has four digits for the year. */
const date: JsonSchema = { type: 'string', format: 'date', pattern: '^[1-9]' };
const customerId: JsonSchema = {
  type: 'string',
  format: 'uuid',
  description: 'An active customer of the organization (else VALIDATION_ERROR on customer_id).',
};
const currency: JsonSchema = { type: 'string', pattern: '^[A-Z]{3}$', description: 'A code of the current ISO 4217 list (amounts then carry its minor units), default MAD.', example: 'MAD' };

const editable = {
  customer_id: customerId,
  issue_date: date,
  due_date: { type: ['string', 'null'], format: 'date', pattern: '^[1-9]', description: 'May precede issue_date on a draft; finalize refuses it.' },
  currency,
  payment_terms: text(INVOICE_LIMITS.payment_terms),
  notes: text(INVOICE_LIMITS.notes),
  items,
};

export const createInvoiceBody: JsonSchema = named('CreateInvoiceRequest', {
  type: 'object',
  required: ['customer_id', 'issue_date', 'items'],
  properties: { ...editable, internal_notes: text(INVOICE_LIMITS.internal_notes, 'Never shown to the customer. Create only.') },
});

/** Partial: send only what changes; null clears due_date, payment_terms, notes. */
export const updateInvoiceBody: JsonSchema = named('UpdateInvoiceRequest', { type: 'object', properties: editable });

export const payInvoiceBody: JsonSchema = named('PayInvoiceRequest', {
  type: 'object',
  properties: {
    paid_at: { type: ['string', 'null'], description: 'ISO 8601 datetime with a time zone, at most 5 minutes in the future; default now.', example: '2026-11-22T13:05:00.000Z' },
    payment_method: text(INVOICE_LIMITS.payment_method),
    payment_reference: text(INVOICE_LIMITS.payment_reference),
  },
});

export const voidInvoiceBody: JsonSchema = named('VoidInvoiceRequest', {
  type: 'object',
  required: ['reason'],
  properties: { reason: { type: 'string', maxLength: INVOICE_LIMITS.void_reason, description: '1 to 500 characters.' } },
});

export const listInvoicesQuery: JsonSchema = {
  type: 'object',
  properties: {
    ...pagingQuery,
    order: { type: 'string', enum: ['asc', 'desc'], default: 'desc', description: 'By created_at, then id.' },
    status: { type: 'string', enum: [...INVOICE_STATUSES] },
    customer_id: { type: 'string', format: 'uuid' },
    date_from: { ...date, description: 'Issue date on or after (inclusive).' },
    date_to: { ...date, description: 'Issue date on or before (inclusive).' },
  },
};

const str = { type: 'string' };
const nullableString = { type: ['string', 'null'] };
const nullableDatetime = { type: ['string', 'null'], format: 'date-time' };
const amount = { type: 'string', description: 'Decimal string with the currency\'s minor units.', example: '1200.00' };

export const invoiceLineSchema: JsonSchema = named('InvoiceLine', representation({
  position: { type: 'integer', description: '1-based.' },
  description: str,
  quantity: { ...str, description: 'Decimal string.' },
  unit_price: { ...str, description: 'Decimal string.' },
  tax_rate: { ...str, description: 'Percent, decimal string.' },
  total: { ...amount, description: 'quantity x unit_price (HT), rounded half up to the currency\'s minor unit.' },
}));

export const taxBreakdownSchema: JsonSchema = named('TaxBreakdownEntry', representation({ rate: str, taxable_amount: amount, tax_amount: amount }));

/** The invoice representation (docs/api-decisions.md "Representations"): list items and webhook snapshots. */
export const invoiceSchema: JsonSchema = named('Invoice', representation({
  id: { type: 'string', format: 'uuid' },
  invoice_number: { type: ['string', 'null'], example: 'INV-2026-000001', description: 'Assigned at finalize.' },
  status: { type: 'string', enum: [...INVOICE_STATUSES] },
  customer_id: { type: 'string', format: 'uuid' },
  customer_name: str,
  currency: str,
  issue_date: { type: 'string', format: 'date' },
  due_date: { type: ['string', 'null'], format: 'date' },
  payment_terms: nullableString,
  notes: nullableString,
  internal_notes: nullableString,
  items: { type: 'array', items: invoiceLineSchema },
  subtotal: amount,
  total_tax: amount,
  total: amount,
  tax_breakdown: { type: 'array', description: 'One entry per rate, rate descending.', items: taxBreakdownSchema },
  amount_due: amount,
  finalized_at: nullableDatetime,
  sent_at: nullableDatetime,
  paid_at: nullableDatetime,
  payment_method: nullableString,
  payment_reference: nullableString,
  voided_at: nullableDatetime,
  void_reason: nullableString,
  created_at: { type: 'string', format: 'date-time' },
  updated_at: { type: 'string', format: 'date-time' },
  version: { type: 'integer', description: 'The invoice stream revision; also sent as the ETag.' },
}));

/** The customer embedded in a single invoice read: as it is now for a draft, as frozen at finalize once issued. */
export const invoiceCustomerSchema: JsonSchema = named('InvoiceCustomer', representation({
  id: { type: 'string', format: 'uuid' },
  name: str,
  type: { type: 'string', enum: [...CUSTOMER_TYPES] },
  ice: nullableString,
  email: nullableString,
  phone: nullableString,
  address: addressSchema,
}));

/** A single read (and every write's answer): the invoice with its `customer`. */
export const invoiceWithCustomerSchema: JsonSchema = named('InvoiceWithCustomer', {
  allOf: [invoiceSchema, { type: 'object', required: ['customer'], properties: { customer: invoiceCustomerSchema } }],
});

/** GET /invoices/{id}/events: one entry of the history. */
export const invoiceEventSchema: JsonSchema = named('InvoiceEvent', representation({
  id: { type: 'string', format: 'uuid' },
  type: { type: 'string', example: 'invoice.finalized' },
  revision: { type: 'integer' },
  occurred_at: { type: 'string', format: 'date-time' },
  actor: { type: 'string', description: 'The API key id, or "system" (recovery, scheduler).' },
  data: { type: 'object', additionalProperties: true, description: 'The event data as stored: the invoice as of this event, plus the facts of that event.' },
}));

/** The line object of invoices, reused by recurring schedules' item templates. */
export { line as lineInputSchema };
