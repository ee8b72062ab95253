/**
 * The total in words, in the document's language, with the currency's unit
 * and minor unit ("mille deux cents dirhams et cinquante centimes"). The
 * amount is the totals code's own string (src/commands/invoice/totals.ts):
 * the words never round it again.
 *
 * MAD, EUR and USD have their nouns in the three languages; any other
 * currency is written with its ISO code as an invariable noun, and its
 * minor units as a fraction ("et 235/1000"): correct, if less elegant.
 */
import type { DocumentLocale } from '../locale.ts';
import { arabicCount, type ArabicNoun } from './ar.ts';
import { englishCount, type EnglishNoun } from './en.ts';
import { frenchCount, type FrenchNoun } from './fr.ts';
import { splitAmount } from './split.ts';

interface CurrencyNouns {
  fr: [FrenchNoun, FrenchNoun];
  en: [EnglishNoun, EnglishNoun];
  ar: [ArabicNoun, ArabicNoun];
}

const arabic = (singular: string, dual: string, plural: string): ArabicNoun => ({ singular, dual, plural, accusative: `${singular}ًا` });
/** Indeclinable loan word (يورو): one form for every case and number. */
const invariable = (word: string): ArabicNoun => ({ singular: word, dual: word, plural: word, accusative: word });

const NOUNS: Record<string, CurrencyNouns> = {
  MAD: {
    fr: [{ one: 'dirham', many: 'dirhams' }, { one: 'centime', many: 'centimes' }],
    en: [{ one: 'dirham', many: 'dirhams' }, { one: 'centime', many: 'centimes' }],
    ar: [arabic('درهم', 'درهمان', 'دراهم'), arabic('سنتيم', 'سنتيمان', 'سنتيمات')],
  },
  EUR: {
    fr: [{ one: 'euro', many: 'euros' }, { one: 'centime', many: 'centimes' }],
    en: [{ one: 'euro', many: 'euros' }, { one: 'cent', many: 'cents' }],
    ar: [invariable('يورو'), arabic('سنت', 'سنتان', 'سنتات')],
  },
  USD: {
    fr: [{ one: 'dollar', many: 'dollars' }, { one: 'cent', many: 'cents' }],
    en: [{ one: 'dollar', many: 'dollars' }, { one: 'cent', many: 'cents' }],
    ar: [arabic('دولار', 'دولاران', 'دولارات'), arabic('سنت', 'سنتان', 'سنتات')],
  },
};

const AND: Record<DocumentLocale, string> = { fr: ' et ', en: ' and ', ar: ' و' };

function count(locale: DocumentLocale, n: bigint, nouns: CurrencyNouns, which: 0 | 1): string {
  if (locale === 'fr') return frenchCount(n, nouns.fr[which]);
  if (locale === 'en') return englishCount(n, nouns.en[which]);
  return arabicCount(n, nouns.ar[which]);
}

/** "1200.50" MAD in fr -> "mille deux cents dirhams et cinquante centimes". */
export function amountInWords(amount: string, currency: string, locale: DocumentLocale): string {
  const { whole, minor, minorDigits } = splitAmount(amount, currency);
  const nouns = NOUNS[currency];
  if (!nouns) {
    const code: FrenchNoun = { one: currency, many: currency };
    const generic: CurrencyNouns = { fr: [code, code], en: [code, code], ar: [invariable(currency), invariable(currency)] };
    const wholeWords = count(locale, whole, generic, 0);
    return minor === 0 ? wholeWords : `${wholeWords}${AND[locale]}${minor}/${10 ** minorDigits}`;
  }
  if (minor === 0) return count(locale, whole, nouns, 0);
  const minorWords = count(locale, BigInt(minor), nouns, 1);
  return whole === 0n ? minorWords : `${count(locale, whole, nouns, 0)}${AND[locale]}${minorWords}`;
}

/** The closing sentence of the invoice, with the total TTC in words. */
export function totalSentence(total: string, currency: string, locale: DocumentLocale): string {
  const words = amountInWords(total, currency, locale);
  if (locale === 'fr') return `Arrêtée la présente facture à la somme de ${words} toutes taxes comprises.`;
  if (locale === 'en') return `This invoice is closed at the sum of ${words}, all taxes included.`;
  return `أوقفت هذه الفاتورة على مبلغ قدره ${words} مع احتساب جميع الرسوم.`;
}
