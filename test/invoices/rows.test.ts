/**
 * Read-model rows -> wire strings: the string surgery of invoice-rows.ts
 * must give exactly what the decimal path (canonicalDecimal, formatAmount)
 * gives, for every currency exponent, including values that need rounding.
 */
import { expect } from 'chai';
import { backfill } from '../../src/db/migrations/0013_invoice_items_on_row.ts';
import { toInvoice } from '../../src/queries/invoice-rows.ts';
import { canonicalDecimal, formatAmount } from '../../src/shared/money.ts';
import { startTestServer } from '../support/server.ts';
import { invoicesClient, line } from './support.ts';

function rowWith(currency: string, numeric: string, amount: string): Record<string, unknown> {
  return {
    id: 'i', invoice_number: null, status: 'draft', customer_id: 'c', customer_name: 'C', currency, issue_date: '2026-01-01',
    due_date: null, payment_terms: null, notes: null, internal_notes: null,
    items: [{ position: 1, description: 'x', quantity: numeric, unit_price: numeric, tax_rate: numeric, total: amount }],
    tax_breakdown: [{ rate: numeric, taxable_amount: amount, tax_amount: amount }],
    subtotal: amount, total_tax: amount, total: amount, amount_due: amount,
    finalized_at: null, sent_at: null, paid_at: null, payment_method: null, payment_reference: null, voided_at: null, void_reason: null,
    created_at: new Date(0), updated_at: new Date(0), version: 0,
  };
}

function check(currency: string, numeric: string, amount: string): void {
  const inv = toInvoice(rowWith(currency, numeric, amount));
  const expected = { canonical: canonicalDecimal(numeric), amount: formatAmount(amount, currency) };
  expect(inv.items[0].quantity, numeric).to.equal(expected.canonical);
  expect(inv.tax_breakdown[0].rate, numeric).to.equal(expected.canonical);
  expect(inv.items[0].total, `${amount} ${currency}`).to.equal(expected.amount);
  expect(inv.total, `${amount} ${currency}`).to.equal(expected.amount);
}

describe('invoice rows: numeric text to wire strings', () => {
  const cases: [string, string, string, string, string][] = [
    // currency, numeric, amount -> canonical, amount
    ['MAD', '1250.5000', '1250.5000', '1250.5', '1250.50'],
    ['MAD', '20.00', '0.0000', '20', '0.00'],
    ['MAD', '0.0050', '1000000000000000000.0000', '0.005', '1000000000000000000.00'],
    ['MAD', '100', '0.0050', '100', '0.01'], // more digits than the currency has: rounded half up
    ['JPY', '3.0000', '1001.0000', '3', '1001'],
    ['JPY', '0.3350', '1000.5000', '0.335', '1001'],
    ['KWD', '5.5000', '1.2350', '5.5', '1.235'],
    ['KWD', '010.1000', '01.2345', '10.1', '1.235'], // leading zeros never come from PostgreSQL; handled anyway
  ];
  for (const [currency, numeric, amount, canonical, formatted] of cases) {
    it(`${currency} ${numeric} / ${amount} -> ${canonical} / ${formatted}`, () => {
      const inv = toInvoice(rowWith(currency, numeric, amount));
      expect([inv.items[0].quantity, inv.total]).to.deep.equal([canonical, formatted]);
      check(currency, numeric, amount);
    });
  }

  it('agrees with decimal.js on 30,000 generated values', () => {
    let seed = 42;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    for (let i = 0; i < 10_000; i++) {
      const int = String([0, 1, 7, 10, 999, 123456789012][next(6)] + next(1000));
      const frac = String(next(10000)).padStart(4, '0');
      for (const [currency, digits] of [['MAD', 2], ['JPY', 0], ['KWD', 3]] as const) {
        const stored = `${int}.${frac.slice(0, digits).padEnd(4, '0')}`; // what the projector stores
        check(currency, `${int}.${frac}`, i % 2 ? stored : `${int}.${frac}`);
      }
    }
  });
});

describe('invoice rows: lines on the row (migration 0013)', function () {
  this.timeout(60_000);
  it('rows filled by the migration from the line tables read the same as rows the projector wrote', async () => {
    const server = await startTestServer();
    try {
      const api = await invoicesClient(server);
      const customer = await api.customer();
      const ids: string[] = [];
      for (const currency of ['MAD', 'JPY', 'KWD']) {
        const body = { customer_id: customer.id, issue_date: '2026-11-22', currency, items: [line('a', '3', '0.335', 20), line('b', '1.5', '1250.5', 10), line('c', 2, 7, 0)] };
        const created = await api.create(body);
        expect(created.status, JSON.stringify(created.body)).to.equal(201);
        ids.push(created.body.data.id);
      }
      const views = async () => Promise.all(ids.map(async (id) => (await api.get(id)).body.data));
      const projected = await views();
      const listed = (await api.list('per_page=100')).body.data;
      await server.database.db.updateTable('invoices').set({ items: '[]', tax_breakdown: '[]' }).execute();
      expect((await views())[0].items, 'emptied').to.deep.equal([]);
      await backfill.execute(server.database.db);
      expect(await views()).to.deep.equal(projected);
      expect((await api.list('per_page=100')).body.data).to.deep.equal(listed);
    } finally {
      await server.stop();
    }
  });
});
