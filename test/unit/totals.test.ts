import { expect } from 'chai';
import { computeTotals, type InvoiceTotals, type TotalsLine } from '../../src/commands/invoice/totals.ts';

/** [quantity, unit_price, tax_rate] */
type Row = [string, string, string];
const lines = (rows: Row[]): TotalsLine[] =>
  rows.map(([quantity, unit_price, tax_rate]) => ({ quantity, unit_price, tax_rate }));
const tax = (rate: string, taxable_amount: string, tax_amount: string) => ({ rate, taxable_amount, tax_amount });

interface Case {
  name: string;
  currency: string;
  rows: Row[];
  expected: InvoiceTotals;
}

const cases: Case[] = [
  {
    name: '3 x 0.335 = 1.005 rounds half up to 1.01',
    currency: 'MAD',
    rows: [['3', '0.335', '20']],
    expected: { line_totals: ['1.01'], subtotal: '1.01', total_tax: '0.20', total: '1.21', tax_breakdown: [tax('20', '1.01', '0.20')] },
  },
  {
    name: 'several rates on one invoice, ordered by rate desc',
    currency: 'MAD',
    rows: [['2', '100', '20'], ['1', '50', '10'], ['3', '10', '7'], ['1', '19.99', '20']],
    expected: {
      line_totals: ['200.00', '50.00', '30.00', '19.99'],
      subtotal: '299.99', total_tax: '51.10', total: '351.09',
      tax_breakdown: [tax('20', '219.99', '44.00'), tax('10', '50.00', '5.00'), tax('7', '30.00', '2.10')],
    },
  },
  {
    name: 'VAT on the sum per rate (BR-CO-17), not per line',
    currency: 'MAD',
    // per line: 0.006 -> 0.01 three times = 0.03; on the sum: 0.09 x 20% = 0.018 -> 0.02
    rows: [['1', '0.025', '20'], ['1', '0.025', '20'], ['1', '0.025', '20']],
    expected: { line_totals: ['0.03', '0.03', '0.03'], subtotal: '0.09', total_tax: '0.02', total: '0.11', tax_breakdown: [tax('20', '0.09', '0.02')] },
  },
  {
    name: '4-decimal unit prices and fractional quantities',
    currency: 'MAD',
    rows: [['7', '1.2345', '20'], ['3', '0.0005', '20'], ['1.5', '2.3333', '20']],
    expected: {
      line_totals: ['8.64', '0.00', '3.50'],
      subtotal: '12.14', total_tax: '2.43', total: '14.57', tax_breakdown: [tax('20', '12.14', '2.43')],
    },
  },
  {
    name: 'JPY has no minor unit',
    currency: 'JPY',
    rows: [['12', '100', '20'], ['3', '333.5', '10']],
    expected: {
      line_totals: ['1200', '1001'], subtotal: '2201', total_tax: '340', total: '2541',
      tax_breakdown: [tax('20', '1200', '240'), tax('10', '1001', '100')],
    },
  },
  {
    name: 'KWD has 3 minor units',
    currency: 'KWD',
    rows: [['3', '0.3335', '5']],
    expected: { line_totals: ['1.001'], subtotal: '1.001', total_tax: '0.050', total: '1.051', tax_breakdown: [tax('5', '1.001', '0.050')] },
  },
  {
    name: 'BHD has 3 minor units',
    currency: 'BHD',
    rows: [['1', '1.2345', '10']],
    expected: { line_totals: ['1.235'], subtotal: '1.235', total_tax: '0.124', total: '1.359', tax_breakdown: [tax('10', '1.235', '0.124')] },
  },
  {
    name: 'TND has 3 minor units',
    currency: 'TND',
    rows: [['2', '0.5', '19']],
    expected: { line_totals: ['1.000'], subtotal: '1.000', total_tax: '0.190', total: '1.190', tax_breakdown: [tax('19', '1.000', '0.190')] },
  },
  {
    name: 'zero-rate lines keep their own breakdown entry',
    currency: 'MAD',
    rows: [['1', '100', '0'], ['1', '100', '20']],
    expected: {
      line_totals: ['100.00', '100.00'], subtotal: '200.00', total_tax: '20.00', total: '220.00',
      tax_breakdown: [tax('20', '100.00', '20.00'), tax('0', '100.00', '0.00')],
    },
  },
  {
    name: 'a rate with decimals (5.5)',
    currency: 'MAD',
    rows: [['1', '99.99', '5.5']],
    expected: { line_totals: ['99.99'], subtotal: '99.99', total_tax: '5.50', total: '105.49', tax_breakdown: [tax('5.5', '99.99', '5.50')] },
  },
  {
    name: 'equal rates written differently are one rate; 5.5 sorts between 10 and 5',
    currency: 'MAD',
    rows: [['1', '10', '20'], ['1', '10', '20.00'], ['1', '10', '5.5'], ['1', '10', '10'], ['1', '10', '5']],
    expected: {
      line_totals: ['10.00', '10.00', '10.00', '10.00', '10.00'], subtotal: '50.00', total_tax: '6.05', total: '56.05',
      tax_breakdown: [tax('20', '20.00', '4.00'), tax('10', '10.00', '1.00'), tax('5.5', '10.00', '0.55'), tax('5', '10.00', '0.50')],
    },
  },
  {
    name: 'an empty invoice is all zeros',
    currency: 'MAD',
    rows: [],
    expected: { line_totals: [], subtotal: '0.00', total_tax: '0.00', total: '0.00', tax_breakdown: [] },
  },
  {
    name: 'the largest accepted line stays exact',
    currency: 'MAD',
    rows: [['1000000000', '1000000000', '20']],
    expected: {
      line_totals: ['1000000000000000000.00'], subtotal: '1000000000000000000.00',
      total_tax: '200000000000000000.00', total: '1200000000000000000.00',
      tax_breakdown: [tax('20', '1000000000000000000.00', '200000000000000000.00')],
    },
  },
];

describe('computeTotals', () => {
  for (const c of cases) {
    it(`${c.name} (${c.currency})`, () => expect(computeTotals(lines(c.rows), c.currency)).to.deep.equal(c.expected));
  }

  it('500 lines of 1 x 0.335 at 20 and 7 (each line rounded before summing)', () => {
    const rows: Row[] = Array.from({ length: 500 }, (_, i) => ['1', '0.335', i % 2 === 0 ? '20' : '7']);
    const totals = computeTotals(lines(rows), 'MAD');
    expect(totals.line_totals).to.have.length(500);
    expect(new Set(totals.line_totals)).to.deep.equal(new Set(['0.34']));
    expect(totals.subtotal).to.equal('170.00');
    expect(totals.tax_breakdown).to.deep.equal([tax('20', '85.00', '17.00'), tax('7', '85.00', '5.95')]);
    expect(totals.total_tax).to.equal('22.95');
    expect(totals.total).to.equal('192.95');
  });

  it('500 lines summing cents that floats would get wrong', () => {
    const rows: Row[] = Array.from({ length: 500 }, () => ['1', '0.1', '20']);
    const totals = computeTotals(lines(rows), 'MAD');
    expect([totals.subtotal, totals.total_tax, totals.total]).to.deep.equal(['50.00', '10.00', '60.00']);
  });
});
