/**
 * Invoice commands. The decider cannot read the customer or the organization,
 * so the handler loads them and puts the facts the rules need in the command
 * (null when the customer does not exist in this organization).
 */
import type { Command } from '../command.ts';
import type { Address, CustomerStatus, CustomerType } from '../customer/events.ts';

/** The customer as the invoice needs it (also the `customer` object of a single read). */
export interface InvoiceCustomer {
  id: string;
  name: string;
  type: CustomerType;
  ice: string | null;
  email: string | null;
  phone: string | null;
  address: Address;
  status: CustomerStatus;
}

/** The seller's identifiers that an issued invoice must show. */
export interface OrganizationFacts {
  legal_name: string | null;
  ice: string | null;
}

/** One line as sent by the client: numbers or numeric strings. */
export interface LineInput {
  description: string;
  quantity: number | string;
  unit_price: number | string;
  /** Default 20. */
  tax_rate?: number | string | null;
}

export interface CreateInvoiceInput {
  customer_id: string;
  issue_date: string;
  due_date?: string | null;
  /** Default MAD. */
  currency?: string;
  payment_terms?: string | null;
  notes?: string | null;
  internal_notes?: string | null;
  items: LineInput[];
}

/** PATCH body: only the fields sent; `items` replaces every line. internal_notes is create-only. */
export type InvoicePatch = Partial<Omit<CreateInvoiceInput, 'internal_notes'>>;

export type CreateInvoice = Command<
  'CreateInvoice',
  CreateInvoiceInput & { invoice_id: string; customer: InvoiceCustomer | null }
>;
/** `customer` is required when patch.customer_id is sent: the new customer, or null if unknown. */
export type UpdateInvoice = Command<
  'UpdateInvoice',
  { invoice_id: string; patch: InvoicePatch; customer?: InvoiceCustomer | null }
>;
/** Step 1 of finalize (docs/architecture.md "Invariants across streams"): validate for issue and lock the draft. */
export type StartFinalization = Command<
  'StartFinalization',
  { invoice_id: string; customer: InvoiceCustomer | null; organization: OrganizationFacts }
>;
/** Step 3 of finalize: put the number assigned by the numbering stream on the invoice. */
export type CompleteFinalization = Command<'CompleteFinalization', { invoice_id: string; invoice_number: string }>;
export type SendInvoice = Command<'SendInvoice', { invoice_id: string }>;
export type PayInvoice = Command<
  'PayInvoice',
  { invoice_id: string; paid_at?: string | null; payment_method?: string | null; payment_reference?: string | null }
>;
export type VoidInvoice = Command<'VoidInvoice', { invoice_id: string; reason: string }>;

export type InvoiceCommand =
  | CreateInvoice
  | UpdateInvoice
  | StartFinalization
  | CompleteFinalization
  | SendInvoice
  | PayInvoice
  | VoidInvoice;
