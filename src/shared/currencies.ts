/**
 * The ISO 4217 currencies an invoice may be in, with their minor units
 * (docs/money.md). The list is ISO 4217 "list one" (current currencies and
 * funds) as published by the ISO 4217 maintenance agency, from the npm
 * package `currency-codes` (kept in step with the agency's XML), plus the
 * amendments published after the package's data (`AMENDMENTS`, each with its
 * source), so that a new code is accepted before the package catches up.
 *
 * Minor units are ISO's (the digits EN 16931 amounts are rounded to), not the
 * CLDR "cash" digits that Intl.NumberFormat uses (which gives HUF 0 and
 * IQD 0 where ISO says 2 and 3). "N.A." entries (precious metals, special
 * drawing rights) count as 0.
 */
import currencyCodes from 'currency-codes';

interface Amendment {
  code: string;
  digits: number;
  /** Where ISO published it. */
  source: string;
}

/** Codes added to list one after `currency-codes`' data (see its publish date). */
const AMENDMENTS: Amendment[] = [
  // Caribbean guilder (Curaçao and Sint Maarten), numeric 532, replacing ANG from 2025-03-31.
  { code: 'XCG', digits: 2, source: 'ISO 4217 amendment 176' },
];

const DIGITS: ReadonlyMap<string, number> = new Map([
  ...currencyCodes.data.map((c) => [c.code, c.digits] as const),
  ...AMENDMENTS.map((a) => [a.code, a.digits] as const),
]);

/** Date of the ISO list the package carries (amendments above come after it). */
export const ISO_4217_PUBLISHED: string = currencyCodes.publishDate;

/** Every accepted code, sorted. */
export function currencyList(): string[] {
  return [...DIGITS.keys()].sort();
}

/** Minor units of an accepted code, or undefined. */
export function isoMinorUnits(code: string): number | undefined {
  return DIGITS.get(code);
}
