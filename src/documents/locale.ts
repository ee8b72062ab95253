/**
 * Document locales and how each writes amounts, rates and currencies
 * (docs/documents.md). Amounts are formatted from the wire string that the
 * project's decimal code produced (src/shared/money.ts formatAmount), by
 * inserting separators: never through Intl, whose locale data changes
 * between Node versions and inserts invisible marks (U+200F, U+202F).
 */
import { canonicalDecimal, formatAmount, type Decimal } from '../shared/money.ts';

export const DOCUMENT_LOCALES = ['fr', 'en', 'ar'] as const;
export type DocumentLocale = (typeof DOCUMENT_LOCALES)[number];

/** No-break space: `1 000,00` never breaks, and in Arabic never reorders into `000,00 1`. */
export const NBSP = '\u00a0';

interface Separators {
  group: string;
  decimal: string;
}

// Arabic invoices in Morocco use Western digits with the French separators.
const SEPARATORS: Record<DocumentLocale, Separators> = {
  fr: { group: NBSP, decimal: ',' },
  en: { group: ',', decimal: '.' },
  ar: { group: NBSP, decimal: ',' },
};

function groupThousands(digits: string, group: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, group);
}

/** A plain decimal string ("-1200.5") with the locale's separators ("-1 200,5"). */
export function formatDecimalText(text: string, locale: DocumentLocale): string {
  const { group, decimal } = SEPARATORS[locale];
  const negative = text.startsWith('-');
  const [int, frac] = (negative ? text.slice(1) : text).split('.');
  const body = groupThousands(int, group) + (frac ? decimal + frac : '');
  return negative ? `-${body}` : body;
}

/** An amount with exactly the currency's minor units: fr `1 200,00`, en `1,200.00`, ar `1 200,00`; JPY `1 200`. */
export function formatMoney(amount: Decimal | string, currency: string, locale: DocumentLocale): string {
  return formatDecimalText(formatAmount(amount, currency), locale);
}

/** A quantity or unit price in its canonical form (`2.5` -> fr `2,5`), never rounded. */
export function formatQuantity(value: Decimal | string, locale: DocumentLocale): string {
  return formatDecimalText(canonicalDecimal(value), locale);
}

/** A VAT rate: fr/ar `5,5 %` (no-break space before %, French typography), en `5.5%`. */
export function formatRate(rate: string, locale: DocumentLocale): string {
  const text = formatDecimalText(canonicalDecimal(rate), locale);
  return locale === 'en' ? `${text}%` : `${text}${NBSP}%`;
}

/**
 * How the currency is written beside an amount, as Moroccan invoices write
 * it: the dirham is `DH` in French, `MAD` in English (the ISO code that
 * foreign readers know), `درهم` in Arabic; any other currency by its ISO code.
 */
export function currencyLabel(currency: string, locale: DocumentLocale): string {
  if (currency !== 'MAD') return currency;
  return { fr: 'DH', en: 'MAD', ar: 'درهم' }[locale];
}

/** A calendar date (YYYY-MM-DD) as the locale writes it: fr/ar `23/11/2026`, en `23 Nov 2026`. */
export function formatDate(date: string, locale: DocumentLocale): string {
  const [y, m, d] = date.slice(0, 10).split('-');
  if (locale === 'en') {
    const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    return `${Number(d)} ${months[Number(m) - 1]} ${y}`;
  }
  return `${d}/${m}/${y}`;
}
