/**
 * Amounts in Arabic words, in the nominative, as they follow "مبلغ قدره"
 * on the invoice (docs/documents.md has the rules with examples):
 *
 * - 1 and 2 are said by the noun itself: "درهم واحد", "درهمان";
 * - 3..10 take the genitive plural, the number in the opposite gender of the
 *   (masculine) noun: "ثلاثة دراهم", "عشرة آلاف";
 * - 11..99 take the accusative singular (tamyiz): "أحد عشر درهمًا",
 *   "واحد وعشرون درهمًا"; a thousand-type noun directly followed by the
 *   currency is in construct instead: "أحد عشر ألف درهم";
 * - hundreds and round thousands take the genitive singular: "مائة درهم",
 *   "ألف درهم", "مليون درهم";
 * - a dual directly followed by its noun loses its nun: "مائتا درهم",
 *   "ألفا درهم", "مليونا درهم" (but "ألفان ومائة درهم");
 * - a number ending in 1 or 2 above one hundred repeats the noun, the
 *   classical form of "ألف ليلة وليلة": "مائة درهم ودرهم",
 *   "ألف درهم ودرهمان", "مائة ألف وألف درهم".
 *
 * Spelling: "مائة" (the form of Moroccan official and banking texts), "و"
 * attached to the word it joins.
 */
import { groupsOfThree } from './split.ts';

/** A counted noun's forms (all masculine here: درهم, سنتيم, ألف, مليون ...). */
export interface ArabicNoun {
  /** Genitive singular, after hundreds and thousands: درهم. */
  singular: string;
  /** Nominative dual: درهمان. */
  dual: string;
  /** Dual in construct (before its noun): ألفا. Only scale nouns need it. */
  dualConstruct?: string;
  /** Plural after 3..10: دراهم. */
  plural: string;
  /** Accusative singular after 11..99: درهمًا. */
  accusative: string;
}

const ONES = ['', 'واحد', 'اثنان', 'ثلاثة', 'أربعة', 'خمسة', 'ستة', 'سبعة', 'ثمانية', 'تسعة', 'عشرة'];
const TENS = ['', '', 'عشرون', 'ثلاثون', 'أربعون', 'خمسون', 'ستون', 'سبعون', 'ثمانون', 'تسعون'];
const HUNDREDS = ['', 'مائة', 'مائتان', 'ثلاثمائة', 'أربعمائة', 'خمسمائة', 'ستمائة', 'سبعمائة', 'ثمانمائة', 'تسعمائة'];
const AND = ' و';

const scale = (singular: string, dual: string, plural: string): ArabicNoun => ({
  singular,
  dual,
  dualConstruct: dual.replace(/ن$/, ''),
  plural,
  accusative: `${singular}ًا`,
});
/** Index = group of three digits (1 = thousands, 2 = millions ...). */
const SCALES: ArabicNoun[] = [
  scale('', '', ''),
  scale('ألف', 'ألفان', 'آلاف'),
  scale('مليون', 'مليونان', 'ملايين'),
  scale('مليار', 'ملياران', 'مليارات'),
  scale('تريليون', 'تريليونان', 'تريليونات'),
  scale('كوادريليون', 'كوادريليونان', 'كوادريليونات'),
  scale('كوينتيليون', 'كوينتيليونان', 'كوينتيليونات'),
  scale('سكستيليون', 'سكستيليونان', 'سكستيليونات'),
];

/** 1..99, masculine counted noun, nominative: "أحد عشر", "واحد وعشرون". */
function below100(n: number): string {
  if (n <= 10) return ONES[n];
  if (n === 11) return 'أحد عشر';
  if (n === 12) return 'اثنا عشر';
  if (n < 20) return `${ONES[n - 10]} عشر`;
  const unit = n % 10;
  const tens = TENS[Math.floor(n / 10)];
  return unit === 0 ? tens : `${ONES[unit]}${AND}${tens}`;
}

/** The hundreds word, in construct ("مائتا") when its noun follows directly. */
function hundredsWord(h: number, construct: boolean): string {
  return h === 2 && construct ? 'مائتا' : HUNDREDS[h];
}

/**
 * 1..999 of a noun, with the noun. `construct`: the noun is directly
 * followed by another noun (a thousand-type noun before the currency), so
 * 11..99 take the bare singular and a dual loses its nun. `oneSaysWahid`:
 * a lone 1 reads "درهم واحد" (the currency) rather than "ألف" (a scale).
 */
function counted(n: number, noun: ArabicNoun, construct: boolean, oneSaysWahid: boolean): string {
  const dual = construct && noun.dualConstruct ? noun.dualConstruct : noun.dual;
  if (n === 1) return oneSaysWahid ? `${noun.singular} واحد` : noun.singular;
  if (n === 2) return dual;
  if (n <= 10) return `${ONES[n]} ${noun.plural}`;
  if (n < 100) return `${below100(n)} ${construct ? noun.singular : noun.accusative}`;
  const h = Math.floor(n / 100);
  const rest = n % 100;
  if (rest === 0) return `${hundredsWord(h, true)} ${noun.singular}`;
  if (rest === 1) return `${hundredsWord(h, true)} ${noun.singular}${AND}${noun.singular}`;
  if (rest === 2) return `${hundredsWord(h, true)} ${noun.singular}${AND}${dual}`;
  return `${HUNDREDS[h]}${AND}${counted(rest, noun, construct, false)}`;
}

/** A whole amount with its noun: 0 -> "صفر درهم", 1001 -> "ألف درهم ودرهم", 2000000 -> "مليونا درهم". */
export function arabicCount(n: bigint, noun: ArabicNoun): string {
  if (n === 0n) return `صفر ${noun.singular}`;
  const groups = groupsOfThree(n);
  if (groups.length > SCALES.length) throw new RangeError(`number too large for words: ${n}`);
  const units = groups[0];
  if (groups.length === 1) return counted(units, noun, false, true);

  // The lowest non-zero thousand-type group is followed directly by the currency noun
  // when the units are 0 ("ألف درهم") or 1 / 2 ("ألف درهم ودرهم"): it is then in construct.
  let lowest = 1;
  while (groups[lowest] === 0) lowest++;
  const nounFollows = units === 0 || units === 1 || units === 2;
  const parts: string[] = [];
  for (let g = groups.length - 1; g >= 1; g--) {
    if (groups[g] === 0) continue;
    parts.push(counted(groups[g], SCALES[g], g === lowest && nounFollows, false));
  }
  const higher = parts.join(AND);
  if (units === 0) return `${higher} ${noun.singular}`;
  if (units === 1) return `${higher} ${noun.singular}${AND}${noun.singular}`;
  if (units === 2) return `${higher} ${noun.singular}${AND}${noun.dual}`;
  return `${higher}${AND}${counted(units, noun, false, false)}`;
}
