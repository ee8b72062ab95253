/** Commands and facts for the invoice decider tests. */
import type { CommandMetadata } from '../../src/commands/command.ts';
import type {
  CreateInvoiceInput,
  InvoiceCommand,
  InvoiceCustomer,
  InvoicePatch,
  OrganizationFacts,
  PayInvoice,
} from '../../src/commands/invoice/commands.ts';
import { invoiceDecider } from '../../src/commands/invoice/decider.ts';
import { history } from './given.ts';

export const INVOICE_ID = '0190a1b2-0000-7000-8000-00000000000a';
export const CUSTOMER_ID = '0190a1b2-0000-7000-8000-000000000001';
export const OTHER_CUSTOMER_ID = '0190a1b2-0000-7000-8000-000000000002';
export const NUMBER = 'INV-2026-000001';

export const at = (minute: number) => `2026-03-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
const meta = (minute: number): CommandMetadata => ({ now: at(minute), actor: 'key_1', organization_id: 'org_1' });

export const customer = (overrides: Partial<InvoiceCustomer> = {}): InvoiceCustomer => ({
  id: CUSTOMER_ID,
  name: 'Atlas SARL',
  type: 'b2b',
  ice: '001234567000089',
  email: 'billing@atlas.ma',
  phone: null,
  address: { street: '1 Bd Zerktouni', city: 'Casablanca', postal_code: '20000', country: 'MA' },
  status: 'active',
  ...overrides,
});
export const organization: OrganizationFacts = { legal_name: 'Vendeur SA', ice: '002345678000012' };

export const create = (
  input: Partial<CreateInvoiceInput> = {},
  facts: InvoiceCustomer | null = customer(),
  minute = 0,
): InvoiceCommand => ({
  type: 'CreateInvoice',
  data: {
    invoice_id: INVOICE_ID,
    customer_id: CUSTOMER_ID,
    issue_date: '2026-03-01',
    items: [{ description: 'Consulting', quantity: 10, unit_price: 100 }],
    customer: facts,
    ...input,
  },
  metadata: meta(minute),
});
export const update = (patch: InvoicePatch, facts?: InvoiceCustomer | null, minute = 1): InvoiceCommand => ({
  type: 'UpdateInvoice',
  data: { invoice_id: INVOICE_ID, patch, ...(facts !== undefined ? { customer: facts } : {}) },
  metadata: meta(minute),
});
export const start = (facts: InvoiceCustomer | null = customer(), org = organization, minute = 2): InvoiceCommand => ({
  type: 'StartFinalization',
  data: { invoice_id: INVOICE_ID, customer: facts, organization: org },
  metadata: meta(minute),
});
export const complete = (invoice_number = NUMBER, minute = 3): InvoiceCommand => ({
  type: 'CompleteFinalization',
  data: { invoice_id: INVOICE_ID, invoice_number },
  metadata: { ...meta(minute), actor: 'system' },
});
export const send = (minute = 4): InvoiceCommand => ({ type: 'SendInvoice', data: { invoice_id: INVOICE_ID }, metadata: meta(minute) });
export const pay = (body: Omit<PayInvoice['data'], 'invoice_id'> = {}, minute = 5): InvoiceCommand => ({
  type: 'PayInvoice',
  data: { invoice_id: INVOICE_ID, ...body },
  metadata: meta(minute),
});
export const voidIt = (reason: unknown = 'Issued to the wrong customer', minute = 6): InvoiceCommand => ({
  type: 'VoidInvoice',
  data: { invoice_id: INVOICE_ID, reason: reason as string },
  metadata: meta(minute),
});

/** The event history of an invoice in each state. */
export const states = {
  draft: () => history(invoiceDecider, create()),
  locked: () => history(invoiceDecider, create(), start()),
  finalized: () => history(invoiceDecider, create(), start(), complete()),
  sent: () => history(invoiceDecider, create(), start(), complete(), send()),
  paid: () => history(invoiceDecider, create(), start(), complete(), pay()),
  void: () => history(invoiceDecider, create(), start(), complete(), voidIt()),
};
export type StateName = keyof typeof states;
