/**
 * Amounts in French words, as "Arrêtée la présente facture à la somme de …"
 * needs them (docs/documents.md): traditional spelling (hyphens below one
 * hundred only, "et" in 21..71, "quatre-vingts" and "deux cents" with their
 * -s only at the end of the number, invariable "mille", "un million de
 * dirhams" with "de" when the number ends in a million-type noun).
 */
import { groupsOfThree } from './split.ts';

const UNITS = ['zéro', 'un', 'deux', 'trois', 'quatre', 'cinq', 'six', 'sept', 'huit', 'neuf', 'dix', 'onze', 'douze', 'treize', 'quatorze', 'quinze', 'seize'];
const TENS: Record<number, string> = { 2: 'vingt', 3: 'trente', 4: 'quarante', 5: 'cinquante', 6: 'soixante' };
/** Nouns of the groups above thousands (long scale). */
const SCALES = ['', 'mille', 'million', 'milliard', 'billion', 'billiard', 'trillion', 'trilliard'];

/** 0..99; `final`: the number ends here (quatre-vingts takes its -s only then). */
function below100(n: number, final: boolean): string {
  if (n <= 16) return UNITS[n];
  if (n < 20) return `dix-${UNITS[n - 10]}`;
  const tens = Math.floor(n / 10);
  const unit = n % 10;
  if (tens === 7) return unit === 1 ? 'soixante et onze' : `soixante-${below100(10 + unit, final)}`;
  if (tens === 8) return unit === 0 ? (final ? 'quatre-vingts' : 'quatre-vingt') : `quatre-vingt-${UNITS[unit]}`;
  if (tens === 9) return `quatre-vingt-${below100(10 + unit, final)}`;
  if (unit === 0) return TENS[tens];
  return unit === 1 ? `${TENS[tens]} et un` : `${TENS[tens]}-${UNITS[unit]}`;
}

/** 1..999; `final` as above (deux cents, but deux cent mille). */
function below1000(n: number, final: boolean): string {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  const parts: string[] = [];
  if (hundreds === 1) parts.push('cent');
  else if (hundreds > 1) parts.push(`${UNITS[hundreds]} ${rest === 0 && final ? 'cents' : 'cent'}`);
  if (rest > 0) parts.push(below100(rest, final));
  return parts.join(' ');
}

/** A whole number in words: 0 -> "zéro", 1000000 -> "un million". */
export function frenchNumber(n: bigint): string {
  if (n === 0n) return UNITS[0];
  const groups = groupsOfThree(n);
  if (groups.length > SCALES.length) throw new RangeError(`number too large for words: ${n}`);
  const parts: string[] = [];
  for (let g = groups.length - 1; g >= 0; g--) {
    const v = groups[g];
    if (v === 0) continue;
    if (g === 0) parts.push(below1000(v, true));
    else if (g === 1) parts.push(v === 1 ? 'mille' : `${below1000(v, false)} mille`);
    else parts.push(`${below1000(v, true)} ${SCALES[g]}${v > 1 ? 's' : ''}`);
  }
  return parts.join(' ');
}

export interface FrenchNoun {
  one: string;
  many: string;
}

/** "un dirham", "deux dirhams", "zéro dirham", "un million de dirhams", "deux millions d'euros". */
export function frenchCount(n: bigint, noun: FrenchNoun): string {
  const words = frenchNumber(n);
  if (n <= 1n) return `${words} ${noun.one}`;
  const endsInMillionNoun = n >= 1_000_000n && n % 1_000_000n === 0n;
  const de = endsInMillionNoun ? (/^[aeiouyéh]/i.test(noun.many) ? "d'" : 'de ') : '';
  return `${words} ${de}${noun.many}`;
}
