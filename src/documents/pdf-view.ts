/**
 * The PDF's content: an issued invoice and its seller turned into the
 * strings the template prints, in one locale. Every figure is the totals
 * code's string with the locale's separators (locale.ts); the total in
 * words is written from the same string (words/). Handlebars escapes all
 * of it; only the CSS and the fonts are inserted raw.
 */
import { readFileSync } from 'node:fs';
import Handlebars from 'handlebars';
import { fontFaces, hasArabic } from './fonts.ts';
import { LABELS } from './labels.ts';
import { currencyLabel, formatDate, formatMoney, formatQuantity, formatRate, type DocumentLocale } from './locale.ts';
import type { DocumentSource } from './source.ts';
import { totalSentence } from './words/index.ts';

const compile = (file: string) => Handlebars.compile(readFileSync(new URL(`./templates/${file}`, import.meta.url), 'utf8'), { strict: false });
/** The document around the body: head, fonts, the page's own styles. */
const documentTemplate = compile('invoice.hbs');
/** What is inside <body>: everything that changes from one invoice to the next. */
const bodyTemplate = compile('invoice-body.hbs');
const css = readFileSync(new URL('./templates/invoice.css', import.meta.url), 'utf8');

interface Address {
  street: string | null;
  city: string | null;
  postal_code: string | null;
  country: string;
}

function addressLines(a: Address | null | undefined): string[] {
  if (!a) return [];
  const city = [a.postal_code, a.city].filter(Boolean).join(' ');
  return [a.street, [city, a.country && a.country !== 'MA' ? a.country : null].filter(Boolean).join(', ')].filter((s): s is string => !!s);
}

const id = (label: string, value: string | null | undefined) => (value ? [{ label, value }] : []);

/**
 * `value` with the bidirectional overrides U+202D and U+202E taken out of its text: they print what follows
 * reversed ("evil #4" as "#4 live") on a legal document. The API refuses them (src/api/pipeline/storable.ts);
 * this keeps the PDF right for text that came another way (the admin CLI, the dashboard, older data).
 */
function withoutOverrides<T>(value: T): T {
  if (typeof value === 'string') return value.replace(/[\u202d\u202e]/g, '') as T;
  if (Array.isArray(value)) return value.map(withoutOverrides) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutOverrides(v)])) as T;
  return value;
}

/** The view the template prints, plus the text the tests and the footer need. */
export function invoiceView(source: DocumentSource, locale: DocumentLocale) {
  const { invoice, seller } = withoutOverrides(source);
  const labels = LABELS[locale];
  const cur = invoice.currency;
  const money = (v: string) => formatMoney(v, cur, locale);
  const customer = invoice.customer;
  let mark = null;
  if (invoice.status === 'void') mark = { kind: 'void', title: labels.void, detail: labels.voidReason, date: formatDate(invoice.voided_at ?? invoice.updated_at, locale) };
  else if (invoice.status === 'paid') mark = { kind: 'paid', title: labels.paid, detail: labels.paidOn, date: formatDate(invoice.paid_at ?? invoice.updated_at, locale) };

  return {
    lang: locale,
    dir: locale === 'ar' ? 'rtl' : 'ltr',
    labels,
    css,
    number: invoice.invoice_number ?? '',
    issueDate: formatDate(invoice.issue_date, locale),
    dueDate: invoice.due_date ? formatDate(invoice.due_date, locale) : labels.noDueDate,
    currency: cur,
    currencyLabel: currencyLabel(cur, locale),
    seller: {
      name: seller.legal_name,
      addressLines: addressLines(seller.billing_address),
      contact: [seller.phone, seller.email, seller.website].filter(Boolean).join('  ·  '),
    },
    parties: [
      {
        label: labels.seller,
        name: seller.legal_name,
        addressLines: addressLines(seller.billing_address),
        ids: [...id(labels.ice, seller.ice), ...id(labels.ifNumber, seller.if_number), ...id(labels.rc, seller.rc), ...id(labels.vat, seller.vat_number)],
      },
      {
        label: labels.buyer,
        name: customer?.name ?? invoice.customer_name,
        addressLines: addressLines(customer?.address),
        ids: [...id(labels.ice, customer?.ice), ...id(labels.phone, customer?.phone), ...id(labels.email, customer?.email)],
      },
    ],
    lines: invoice.items.map((item) => ({
      position: item.position,
      description: item.description,
      quantity: formatQuantity(item.quantity, locale),
      unitPrice: formatQuantity(item.unit_price, locale),
      rate: formatRate(item.tax_rate, locale),
      total: money(item.total),
    })),
    breakdown: invoice.tax_breakdown.map((t) => ({ rate: formatRate(t.rate, locale), taxable: money(t.taxable_amount), tax: money(t.tax_amount) })),
    totals: { subtotal: money(invoice.subtotal), tax: money(invoice.total_tax), total: money(invoice.total), due: money(invoice.amount_due) },
    words: totalSentence(invoice.total, cur, locale),
    paymentTerms: invoice.payment_terms ?? labels.noDueDate,
    notes: invoice.notes,
    mark,
    // Latin abbreviations in every locale: Moroccan invoices print ICE, IF and RC as such, also in Arabic.
    footerIds: [id('ICE', seller.ice), id('IF', seller.if_number), id('RC', seller.rc)].flat().map((x) => `${x.label} ${x.value}`),
  };
}

export type InvoiceView = ReturnType<typeof invoiceView>;

/**
 * One invoice as the warm printer fills it into a page that already holds
 * the fonts (printer.ts): the <html> attributes, the title, the page's own
 * styles (invoice.css and the @page rules) and the body. `invoiceHtml`
 * puts the same parts into a whole document, so both paths print the same.
 */
export interface PrintableDocument {
  lang: string;
  dir: string;
  title: string;
  style: string;
  body: string;
}

export function invoiceDocument(view: InvoiceView): PrintableDocument {
  return { lang: view.lang, dir: view.dir, title: `${view.labels.title} ${view.number}`, style: `${view.css}\n${pageCss(view)}`, body: bodyTemplate(view) };
}

/** The whole HTML page, self-contained (fonts inlined, no URL anywhere). */
export function invoiceHtml(view: InvoiceView, source: DocumentSource): string {
  const { invoice, seller } = source;
  const text = [seller.legal_name, invoice.customer?.name, invoice.notes, invoice.payment_terms, ...invoice.items.map((i) => i.description)].join(' ');
  return documentHtml(invoiceDocument(view), fontFaces(view.lang === 'ar' || hasArabic(text)));
}

/** A document of these parts with these @font-face rules (all of them for a warm page's shell). */
export function documentHtml(doc: PrintableDocument, fonts: string): string {
  return documentTemplate({ ...doc, fonts });
}

/** The empty document a warm page starts from: every font, no content (printer.ts fills it per render). */
export function shellHtml(): string {
  return documentHtml({ lang: 'fr', dir: 'ltr', title: '', style: '', body: '' }, fontFaces(true));
}

/** A CSS string literal: quotes, backslashes and line breaks escaped. */
const cssString = (s: string) => `"${s.replace(/[\\"]/g, '\\$&').replace(/[\r\n]+/g, ' ')}"`;

/**
 * Every page's footer, as CSS page-margin boxes (they use the document's
 * embedded fonts, unlike Chromium's footer templates, which can only use the
 * system's): the seller's legal identifiers, and "page/pages". Margin boxes
 * do not shape Arabic, so an Arabic legal name is left to the page itself.
 */
export function pageCss(view: InvoiceView): string {
  const name = hasArabic(view.seller.name) ? [] : [view.seller.name];
  // A zero-width space every 30 characters of a word (a character with its combining marks, never inside a
  // surrogate pair): margin boxes ignore overflow-wrap, and a legal name without a space would otherwise run
  // under "k/N" instead of breaking inside its box.
  const ids = [...name, ...view.footerIds].join('  ·  ').replace(/(?:[^\s\p{M}]\p{M}*){30}(?=\S)/gu, '$&\u200b');
  const [start, end] = view.dir === 'rtl' ? ['right', 'left'] : ['left', 'right'];
  const box = "font-family: 'Noto Sans', sans-serif; font-size: 7pt; color: #64748b; border-top: 0.3mm solid #e2e8f0;";
  return `@page { size: A4; margin: 14mm 14mm 18mm 14mm;
  @bottom-${start} { content: ${cssString(ids)}; ${box} text-align: ${start}; vertical-align: top; padding-top: 2mm; }
  @bottom-${end} { content: ${cssString(`${view.number}   `)} counter(page) "/" counter(pages); ${box} text-align: ${end}; vertical-align: top; padding-top: 2mm; width: 45mm; }
}`;
}
