/**
 * Invoice totals (docs/api-decisions.md "Totals and tax"). Line net amounts are rounded one by one,
 * and VAT is computed once per rate on the sum of that rate's line amounts
 * (EN 16931 BR-CO-17), so the breakdown always agrees with what a UBL
 * validator recomputes. Everything is decimal; amounts leave as strings.
 */
import { canonicalDecimal, Decimal, formatAmount, roundToMinor } from '../../shared/money.ts';

/** One line as the totals need it; decimal strings or Decimal values. */
export interface TotalsLine {
  quantity: Decimal | string;
  unit_price: Decimal | string;
  tax_rate: Decimal | string;
}

export interface TaxBreakdownEntry {
  /** Canonical percent string ("20", "5.5"). */
  rate: string;
  taxable_amount: string;
  tax_amount: string;
}

export interface InvoiceTotals {
  /** items[i].total, in input order. */
  line_totals: string[];
  subtotal: string;
  total_tax: string;
  total: string;
  /** One entry per distinct rate (zero rate included), rate descending. */
  tax_breakdown: TaxBreakdownEntry[];
}

/** items[].total = round half up (quantity x unit_price) to the minor unit. */
export function lineNetAmount(line: Pick<TotalsLine, 'quantity' | 'unit_price'>, currency: string): Decimal {
  return roundToMinor(new Decimal(line.quantity).mul(line.unit_price), currency);
}

export function computeTotals(lines: readonly TotalsLine[], currency: string): InvoiceTotals {
  const lineAmounts = lines.map((line) => lineNetAmount(line, currency));

  // Group by the rate's value, so "20", "20.0" and 20 are one rate.
  const byRate = new Map<string, { rate: Decimal; taxable: Decimal }>();
  lines.forEach((line, i) => {
    const rate = new Decimal(line.tax_rate);
    const key = canonicalDecimal(rate);
    const group = byRate.get(key) ?? { rate, taxable: new Decimal(0) };
    group.taxable = group.taxable.add(lineAmounts[i]);
    byRate.set(key, group);
  });

  const groups = [...byRate.values()].sort((a, b) => b.rate.comparedTo(a.rate));
  const breakdown = groups.map(({ rate, taxable }) => ({
    rate,
    taxable,
    tax: roundToMinor(taxable.mul(rate).div(100), currency),
  }));

  const subtotal = lineAmounts.reduce((sum, amount) => sum.add(amount), new Decimal(0));
  const totalTax = breakdown.reduce((sum, entry) => sum.add(entry.tax), new Decimal(0));

  return {
    line_totals: lineAmounts.map((amount) => formatAmount(amount, currency)),
    subtotal: formatAmount(subtotal, currency),
    total_tax: formatAmount(totalTax, currency),
    total: formatAmount(subtotal.add(totalTax), currency),
    tax_breakdown: breakdown.map((entry) => ({
      rate: canonicalDecimal(entry.rate),
      taxable_amount: formatAmount(entry.taxable, currency),
      tax_amount: formatAmount(entry.tax, currency),
    })),
  };
}
