/**
 * Invoice lines: reading client input (docs/api-decisions.md "Identifiers, dates and money" limits) and pricing
 * them into the stored representation (section 2). Errors name the exact
 * field, e.g. `items[0].quantity`: "must be greater than 0".
 */
import { canonicalDecimal, parseQuantity, parseTaxRate, parseUnitPrice, zeroAmount, type Parsed } from '../../shared/money.ts';
import { FieldErrors, readText } from '../field-rules.ts';
import type { Invoice, InvoiceLine } from './events.ts';
import { computeTotals } from './totals.ts';

export const MAX_LINES = 500;
export const MAX_DESCRIPTION = 1000;

/** A line after validation: canonical decimal strings, default rate applied. */
export interface LineValues {
  description: string;
  quantity: string;
  unit_price: string;
  tax_rate: string;
}

function readNumber(errors: FieldErrors, field: string, value: unknown, parse: (v: unknown) => Parsed): string {
  if (value === undefined) {
    errors.add(field, 'is required');
    return '0';
  }
  const parsed = parse(value);
  if (!parsed.ok) {
    errors.add(field, parsed.message);
    return '0';
  }
  return canonicalDecimal(parsed.value);
}

/** Reads `items`; an empty array is a valid draft (finalize requires a line). */
export function readLines(errors: FieldErrors, value: unknown): LineValues[] {
  if (!Array.isArray(value)) {
    errors.add('items', value === undefined || value === null ? 'is required' : 'must be an array');
    return [];
  }
  if (value.length > MAX_LINES) {
    errors.add('items', `must contain at most ${MAX_LINES} lines`);
    return [];
  }
  return value.map((item: unknown, i) => {
    const at = `items[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      errors.add(at, 'must be an object');
      return { description: '', quantity: '0', unit_price: '0', tax_rate: '0' };
    }
    const line = item as Record<string, unknown>;
    const description = readText(errors, `${at}.description`, line.description, { required: true, max: MAX_DESCRIPTION });
    return {
      description: description ?? '',
      quantity: readNumber(errors, `${at}.quantity`, line.quantity, parseQuantity),
      unit_price: readNumber(errors, `${at}.unit_price`, line.unit_price, parseUnitPrice),
      tax_rate: readNumber(errors, `${at}.tax_rate`, line.tax_rate ?? null, parseTaxRate),
    };
  });
}

export type PricedFields = Pick<Invoice, 'items' | 'subtotal' | 'total_tax' | 'total' | 'tax_breakdown' | 'amount_due'>;

/** Lines with their totals and the invoice totals; amount_due is zero once paid. */
export function priceLines(lines: readonly LineValues[], currency: string, paid: boolean): PricedFields {
  const totals = computeTotals(lines, currency);
  const items: InvoiceLine[] = lines.map((line, i) => ({
    position: i + 1,
    description: line.description,
    quantity: line.quantity,
    unit_price: line.unit_price,
    tax_rate: line.tax_rate,
    total: totals.line_totals[i],
  }));
  return {
    items,
    subtotal: totals.subtotal,
    total_tax: totals.total_tax,
    total: totals.total,
    tax_breakdown: totals.tax_breakdown,
    amount_due: paid ? zeroAmount(currency) : totals.total,
  };
}
