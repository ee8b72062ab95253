/**
 * Issued invoices for document tests, built like the API builds them: the
 * totals come from computeTotals (src/commands/invoice/totals.ts) and the
 * canonical decimal strings from the money code.
 */
import type { InvoiceStatus } from '../../src/commands/invoice/events.ts';
import { computeTotals } from '../../src/commands/invoice/totals.ts';
import type { DocumentSource, Seller } from '../../src/documents/source.ts';
import { canonicalDecimal, zeroAmount } from '../../src/shared/money.ts';

export type LineSpec = [description: string, quantity: string, unitPrice: string, rate: string];

export interface SourceSpec {
  number?: string;
  currency?: string;
  lines: LineSpec[];
  status?: InvoiceStatus;
  b2b?: boolean;
  seller?: Partial<Seller>;
  dueDate?: string | null;
  paymentTerms?: string | null;
  notes?: string | null;
  customerName?: string;
  /** A buyer in France. */
  foreignBuyer?: boolean;
}

export const SELLER: Seller = {
  legal_name: 'Atlas Conseil SARL',
  ice: '001525896000088',
  rc: '412345 Casablanca',
  if_number: '40123456',
  vat_number: null,
  phone: '+212 522 20 30 40',
  email: 'facturation@atlas-conseil.ma',
  website: 'https://atlas-conseil.ma',
  billing_address: { street: '27 boulevard Mohammed V', city: 'Casablanca', postal_code: '20250', country: 'MA' },
};

export function makeSource(spec: SourceSpec): DocumentSource {
  const currency = spec.currency ?? 'MAD';
  const status = spec.status ?? 'finalized';
  const items = spec.lines.map(([description, quantity, unit_price, tax_rate], i) => ({
    position: i + 1, description, quantity: canonicalDecimal(quantity), unit_price: canonicalDecimal(unit_price), tax_rate: canonicalDecimal(tax_rate), total: '',
  }));
  const totals = computeTotals(items, currency);
  items.forEach((item, i) => (item.total = totals.line_totals[i]));
  const b2b = spec.b2b ?? true;
  const name = spec.customerName ?? (b2b ? 'Société Marocaine des Industries du Sud SA' : 'Karima Benali');
  return {
    seller: { ...SELLER, ...spec.seller },
    invoice: {
      id: '0193a1b2-0000-7000-8000-000000000001',
      invoice_number: spec.number ?? 'INV-2026-000042',
      status,
      customer_id: '0193a1b2-0000-7000-8000-0000000000c1',
      customer_name: name,
      customer: {
        id: '0193a1b2-0000-7000-8000-0000000000c1',
        name,
        type: b2b ? 'b2b' : 'b2c',
        ice: b2b ? '002233445000067' : null,
        email: b2b ? 'compta@smis.ma' : null,
        phone: null,
        address: spec.foreignBuyer
          ? { street: '12 rue de Rivoli', city: 'Paris', postal_code: '75004', country: 'FR' }
          : b2b
          ? { street: 'Zone industrielle Ait Melloul, lot 112', city: 'Agadir', postal_code: '80150', country: 'MA' }
          : { street: null, city: 'Rabat', postal_code: null, country: 'MA' },
      },
      currency,
      issue_date: '2026-11-23',
      due_date: spec.dueDate === undefined ? '2026-12-23' : spec.dueDate,
      payment_terms: spec.paymentTerms === undefined ? 'Virement à 30 jours' : spec.paymentTerms,
      notes: spec.notes ?? null,
      internal_notes: null,
      items,
      subtotal: totals.subtotal,
      total_tax: totals.total_tax,
      total: totals.total,
      tax_breakdown: totals.tax_breakdown,
      amount_due: status === 'paid' ? zeroAmount(currency) : totals.total,
      finalized_at: '2026-11-23T10:00:00.000Z',
      sent_at: null,
      paid_at: status === 'paid' ? '2026-11-28T09:30:00.000Z' : null,
      payment_method: status === 'paid' ? 'bank_transfer' : null,
      payment_reference: null,
      voided_at: status === 'void' ? '2026-11-25T16:00:00.000Z' : null,
      void_reason: status === 'void' ? 'Erreur de quantité' : null,
      created_at: '2026-11-23T09:00:00.000Z',
      updated_at: '2026-11-23T10:00:00.000Z',
      version: 3,
    },
  };
}

/** n lines with varied descriptions, quantities, prices and the given rates in turn. */
export function manyLines(n: number, rates: string[] = ['20', '10', '14', '7']): LineSpec[] {
  return Array.from({ length: n }, (_, i) => [
    `Prestation ${i + 1}: ${['Audit', 'Formation', 'Maintenance', 'Licence'][i % 4]} — lot ${String.fromCharCode(65 + (i % 26))}`,
    String((i % 7) + 1),
    `${(i * 37) % 2000}.${String((i * 13) % 100).padStart(2, '0')}`,
    rates[i % rates.length],
  ]);
}
