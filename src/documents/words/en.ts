/**
 * Amounts in English words (short scale, hyphens in 21..99, no "and" inside
 * the number as on cheques, so "and" only joins the minor units).
 */
import { groupsOfThree } from './split.ts';

const ONES = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const SCALES = ['', 'thousand', 'million', 'billion', 'trillion', 'quadrillion', 'quintillion', 'sextillion'];

function below1000(n: number): string {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  const parts: string[] = [];
  if (hundreds > 0) parts.push(`${ONES[hundreds]} hundred`);
  if (rest >= 20) parts.push(rest % 10 === 0 ? TENS[rest / 10] : `${TENS[Math.floor(rest / 10)]}-${ONES[rest % 10]}`);
  else if (rest > 0) parts.push(ONES[rest]);
  return parts.join(' ');
}

export function englishNumber(n: bigint): string {
  if (n === 0n) return ONES[0];
  const groups = groupsOfThree(n);
  if (groups.length > SCALES.length) throw new RangeError(`number too large for words: ${n}`);
  const parts: string[] = [];
  for (let g = groups.length - 1; g >= 0; g--) {
    if (groups[g] === 0) continue;
    parts.push(g === 0 ? below1000(groups[g]) : `${below1000(groups[g])} ${SCALES[g]}`);
  }
  return parts.join(' ');
}

export interface EnglishNoun {
  one: string;
  many: string;
}

/** "one dirham", "zero dirhams", "two million dirhams". */
export function englishCount(n: bigint, noun: EnglishNoun): string {
  return `${englishNumber(n)} ${n === 1n ? noun.one : noun.many}`;
}
