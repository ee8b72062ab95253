/**
 * Decimal money math (docs/api-decisions.md "Identifiers, dates and money"). Nothing on the money path ever
 * touches a JS float: inputs are parsed into decimal.js values from their
 * string form, and amounts leave as strings with the currency's minor units.
 * Decisions (canonical echo format, limits) are written down in docs/money.md.
 */
import { Decimal as DecimalJs } from 'decimal.js';
import { isoMinorUnits } from './currencies.ts';

/** A private Decimal constructor: global decimal.js settings are never touched. */
export const Decimal = DecimalJs.clone({
  precision: 60, // far beyond 500 lines x 1e9 x 1e9 with 4+4 decimals
  rounding: DecimalJs.ROUND_HALF_UP,
  toExpNeg: -9e15, // toString() never switches to exponent notation
  toExpPos: 9e15,
});
export type Decimal = InstanceType<typeof Decimal>;

export const DEFAULT_CURRENCY = 'MAD';
export const DEFAULT_TAX_RATE = '20';
/** Upper bound of quantity and unit_price (keeps every amount inside numeric(30,4)). */
export const MAX_LINE_INPUT = new Decimal('1000000000');

// ---------------------------------------------------------------- currencies

/**
 * True for a code of the current ISO 4217 list (src/shared/currencies.ts,
 * docs/money.md): CLF and the other funds included, withdrawn codes not.
 */
export function isSupportedCurrency(code: unknown): code is string {
  return typeof code === 'string' && /^[A-Z]{3}$/.test(code) && isoMinorUnits(code) !== undefined;
}

/** Digits after the decimal point for amounts in this currency, as ISO 4217 gives them (MAD 2, JPY 0, KWD 3, CLF 4). */
export function minorUnits(currency: string): number {
  const units = isSupportedCurrency(currency) ? isoMinorUnits(currency) : undefined;
  if (units === undefined) throw new RangeError(`unsupported currency: ${String(currency)}`);
  return units;
}

/** Round half up to the currency's minor unit (EN 16931 amounts). */
export function roundToMinor(amount: Decimal, currency: string): Decimal {
  return amount.toDecimalPlaces(minorUnits(currency), Decimal.ROUND_HALF_UP);
}

/** An amount as its wire string, with exactly the minor units: "1200.00", JPY "1200", KWD "1.234". */
export function formatAmount(amount: Decimal | string, currency: string): string {
  const rounded = roundToMinor(new Decimal(amount), currency);
  const text = rounded.toFixed(minorUnits(currency));
  return rounded.isZero() ? text.replace(/^-/, '') : text;
}

/** Zero in the currency's format ("0.00", JPY "0"), e.g. amount_due once paid. */
export function zeroAmount(currency: string): string {
  return formatAmount(new Decimal(0), currency);
}

// ---------------------------------------------------------- line input values

/**
 * Canonical echo of quantity / unit_price / tax_rate: plain decimal, no
 * exponent, no trailing zeros, no "-0" ("3", "0.335", "20", "5.5").
 */
export function canonicalDecimal(value: Decimal | string): string {
  const d = new Decimal(value);
  return d.isZero() ? '0' : d.toFixed();
}

export type Parsed = { ok: true; value: Decimal } | { ok: false; message: string };

const NUMERIC_STRING = /^-?\d+(\.\d+)?$/;

/**
 * Reads a JSON number or numeric string without going through binary
 * floating point arithmetic: a number is taken by its shortest round-trip
 * representation (String(0.335) === "0.335"), which is what the client wrote.
 */
export function parseDecimal(input: unknown): Parsed {
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return { ok: false, message: 'must be a finite number' };
    return { ok: true, value: new Decimal(String(input)) };
  }
  if (typeof input === 'string') {
    const text = input.trim();
    if (!NUMERIC_STRING.test(text)) return { ok: false, message: 'must be a number' };
    return { ok: true, value: new Decimal(text) };
  }
  return { ok: false, message: 'must be a number' };
}

interface Bounds {
  /** Smallest accepted value, and whether it is itself accepted. */
  min: Decimal;
  minInclusive: boolean;
  max: Decimal;
  maxDecimals: number;
}

function parseBounded(input: unknown, bounds: Bounds): Parsed {
  const parsed = parseDecimal(input);
  if (!parsed.ok) return parsed;
  const v = parsed.value;
  if (bounds.minInclusive ? v.lt(bounds.min) : v.lte(bounds.min)) {
    const relation = bounds.minInclusive ? 'greater than or equal to' : 'greater than';
    return { ok: false, message: `must be ${relation} ${canonicalDecimal(bounds.min)}` };
  }
  if (v.gt(bounds.max)) return { ok: false, message: `must be at most ${canonicalDecimal(bounds.max)}` };
  if (v.decimalPlaces() > bounds.maxDecimals) {
    return { ok: false, message: `must have at most ${bounds.maxDecimals} decimal places` };
  }
  return { ok: true, value: v.isZero() ? new Decimal(0) : v };
}

/** quantity: > 0, at most 4 decimals, at most MAX_LINE_INPUT. */
export function parseQuantity(input: unknown): Parsed {
  return parseBounded(input, { min: new Decimal(0), minInclusive: false, max: MAX_LINE_INPUT, maxDecimals: 4 });
}

/** unit_price: >= 0, at most 4 decimals, at most MAX_LINE_INPUT. */
export function parseUnitPrice(input: unknown): Parsed {
  return parseBounded(input, { min: new Decimal(0), minInclusive: true, max: MAX_LINE_INPUT, maxDecimals: 4 });
}

/** tax_rate (percent): 0..100, at most 2 decimals; absent (undefined or null) means 20. */
export function parseTaxRate(input: unknown): Parsed {
  if (input === undefined || input === null) return { ok: true, value: new Decimal(DEFAULT_TAX_RATE) };
  return parseBounded(input, { min: new Decimal(0), minInclusive: true, max: new Decimal(100), maxDecimals: 2 });
}
