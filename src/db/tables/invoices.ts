/**
 * The invoices read model (migrations 0006, 0010, 0013; projectors
 * src/projections/invoices.ts and src/projections/invoice-numbers.ts;
 * queries src/queries/invoices.ts and src/queries/invoice-rows.ts).
 */
import type { ColumnType, Selectable } from 'kysely';
import type { InvoiceLine } from '../../commands/invoice/events.ts';
import type { TaxBreakdownEntry } from '../../commands/invoice/totals.ts';
import type { Numeric, Timestamp } from './columns.ts';

export interface InvoicesTable {
  id: string;
  organization_id: string;
  invoice_number: string | null;
  status: 'draft' | 'finalized' | 'sent' | 'paid' | 'void';
  finalization_pending: boolean;
  customer_id: string;
  customer_name: string;
  customer_type: string | null;
  customer_ice: string | null;
  customer_email: string | null;
  customer_phone: string | null;
  customer_address_street: string | null;
  customer_address_city: string | null;
  customer_address_postal_code: string | null;
  customer_address_country: string | null;
  currency: string;
  /** YYYY-MM-DD */
  issue_date: string;
  due_date: string | null;
  payment_terms: string | null;
  notes: string | null;
  internal_notes: string | null;
  subtotal: Numeric;
  total_tax: Numeric;
  total: Numeric;
  amount_due: Numeric;
  finalized_at: Timestamp | null;
  sent_at: Timestamp | null;
  paid_at: Timestamp | null;
  payment_method: string | null;
  payment_reference: string | null;
  voided_at: Timestamp | null;
  void_reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  version: number;
  /** jsonb: the snapshot's lines and breakdown (migration 0013) */
  items: ColumnType<InvoiceLine[], string, string>;
  tax_breakdown: ColumnType<TaxBreakdownEntry[], string, string>;
}

export interface InvoiceLinesTable {
  invoice_id: string;
  organization_id: string;
  position: number;
  description: string;
  quantity: Numeric;
  unit_price: Numeric;
  tax_rate: Numeric;
  total: Numeric;
}

export interface InvoiceTaxBreakdownTable {
  invoice_id: string;
  organization_id: string;
  rate: Numeric;
  taxable_amount: Numeric;
  tax_amount: Numeric;
}

export interface InvoiceNumbersTable {
  organization_id: string;
  year: number;
  sequence: number;
  number: string;
  invoice_id: string;
  assigned_at: Timestamp;
}

export interface InvoiceStatusCountsTable {
  organization_id: string;
  status: string;
  /** 0..255: the invoice id's last byte (migrations 0070, 0071); a count is the sum over the slots. */
  slot: number;
  invoices: number;
}

export interface InvoiceIssueMonthCountsTable {
  organization_id: string;
  /** The first day of the issue date's month. */
  month: string;
  status: string;
  /** 0..15: the invoice id's last byte modulo 16 (migration 0102); a count is the sum over the slots. Never 0 invoices. */
  slot: number;
  invoices: number;
}

export interface InvoicesTables {
  invoices: InvoicesTable;
  invoice_lines: InvoiceLinesTable;
  invoice_tax_breakdown: InvoiceTaxBreakdownTable;
  invoice_numbers: InvoiceNumbersTable;
  invoice_status_counts: InvoiceStatusCountsTable;
  invoice_issue_month_counts: InvoiceIssueMonthCountsTable;
}

export type InvoiceRow = Selectable<InvoicesTable>;
export type InvoiceNumberRow = Selectable<InvoiceNumbersTable>;
