/**
 * An amount's wire string ("1200.05", currency minor units) split into what
 * the words need: the whole units as a bigint, the minor units as a number
 * (0..999), and groups of three digits from the right (index 0 = units,
 * 1 = thousands, 2 = millions ...). The figures are the totals code's own
 * strings: nothing is rounded again here.
 */
import { formatAmount, minorUnits } from '../../shared/money.ts';

export interface SplitAmount {
  whole: bigint;
  minor: number;
  /** Digits of the minor unit of the currency (MAD 2, JPY 0, KWD 3). */
  minorDigits: number;
}

export function splitAmount(amount: string, currency: string): SplitAmount {
  const text = formatAmount(amount, currency);
  if (text.startsWith('-')) throw new RangeError(`negative amount in words: ${text}`);
  const [whole, frac = ''] = text.split('.');
  return { whole: BigInt(whole), minor: frac ? Number(frac) : 0, minorDigits: minorUnits(currency) };
}

/** 1234567 -> [567, 234, 1] */
export function groupsOfThree(n: bigint): number[] {
  const groups: number[] = [];
  let rest = n;
  while (rest > 0n) {
    groups.push(Number(rest % 1000n));
    rest /= 1000n;
  }
  return groups;
}
