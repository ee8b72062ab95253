/**
 * UBL 2.1 Invoice with EN 16931 semantics (docs/documents.md lists every
 * business term we fill and why). Figures are the invoice's own strings from
 * the totals code (src/commands/invoice/totals.ts, through the read model):
 * lines, VAT breakdown per rate (BR-CO-17, the API's tax_breakdown) and
 * totals are copied, never recomputed or rounded here.
 *
 * The XML is the document as issued: a later payment or void is an event,
 * not a new document, so a paid or void invoice's XML equals the one served
 * right after finalize (no status in it).
 */
import type { BillingAddress } from '../commands/organization/events.ts';
import type { DocumentSource } from './source.ts';

/**
 * An amount as UBL carries it: the wire string, with zeros beyond the
 * second decimal dropped ("1.250" KWD -> "1.25"; exact, never rounded).
 * EN 16931 allows at most 2 decimals (BR-DEC-*): a 3-decimal currency's
 * amount with a significant third decimal stays exact and is reported by
 * a validator (docs/documents.md).
 */
export function ublAmount(text: string): string {
  return text.replace(/^(-?\d+\.\d\d)(\d*?)0+$/, '$1$2');
}

/** EN 16931 VAT category: S (standard) for a positive rate, Z (zero rated) for 0 %. */
export function vatCategory(rate: string): 'S' | 'Z' {
  return Number(rate) === 0 ? 'Z' : 'S';
}

/** BR-CO-09: a VAT identifier starts with its country code. */
function vatIdentifier(vat: string, country: string): string {
  const compact = vat.replace(/\s+/g, '');
  return /^[A-Z]{2}/.test(compact) ? compact : `${country}${compact}`;
}

/** Text as XML character data: every `&`, `<` and `>` escaped. */
function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** An attribute value: also `"`. */
function escapeAttribute(text: string): string {
  return escapeText(text).replace(/"/g, '&quot;');
}

/**
 * The UBL document written straight into a string, indented by two spaces
 * per level, one element per line, text inline: the layout xmlbuilder2
 * prints with `prettyPrint` (the UBL of every invoice issued so far was
 * printed by it, and stays byte for byte the same). Why not xmlbuilder2
 * itself: it builds a DOM of every element before serializing it, which made
 * a document cost 5 to 10 times what the string costs (docs/performance.md
 * "Documents"); the tests check that xmlbuilder2 parses each document and
 * prints it back unchanged.
 */
class UblWriter {
  private readonly parts: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  private readonly open: string[] = [];
  /** Whether the element opened last has a child yet (an empty one closes as `<x/>`). */
  private empty = false;

  private indent(): string {
    return `\n${'  '.repeat(this.open.length)}`;
  }

  start(name: string, attributes = ''): this {
    this.parts.push(`${this.indent()}<${name}${attributes}>`);
    this.open.push(name);
    this.empty = true;
    return this;
  }

  end(): this {
    const name = this.open.pop()!;
    if (this.empty) this.parts.push(this.parts.pop()!.replace(/>$/, '/>'));
    else this.parts.push(`${this.indent()}</${name}>`);
    this.empty = false;
    return this;
  }

  /** An element holding only text. */
  text(name: string, value: string, attributes = ''): this {
    this.parts.push(value === '' ? `${this.indent()}<${name}${attributes}/>` : `${this.indent()}<${name}${attributes}>${escapeText(value)}</${name}>`);
    this.empty = false;
    return this;
  }

  toString(): string {
    return this.parts.join('');
  }
}

const attribute = (name: string, value: string) => ` ${name}="${escapeAttribute(value)}"`;

function address(x: UblWriter, a: BillingAddress): void {
  x.start('cac:PostalAddress');
  if (a.street) x.text('cbc:StreetName', a.street);
  if (a.city) x.text('cbc:CityName', a.city);
  if (a.postal_code) x.text('cbc:PostalZone', a.postal_code);
  // EN 16931 requires the country (BR-09, BR-11); Moroccan addresses default to MA.
  x.start('cac:Country').text('cbc:IdentificationCode', a.country || 'MA').end();
  x.end();
}

function taxScheme(x: UblWriter, id: string): void {
  x.start('cac:TaxScheme').text('cbc:ID', id).end();
}

function contact(x: UblWriter, phone: string | null, email: string | null): void {
  if (!phone && !email) return;
  x.start('cac:Contact');
  if (phone) x.text('cbc:Telephone', phone);
  if (email) x.text('cbc:ElectronicMail', email);
  x.end();
}

function seller(x: UblWriter, { seller: s }: DocumentSource): void {
  x.start('cac:AccountingSupplierParty').start('cac:Party');
  if (s.ice) x.start('cac:PartyIdentification').text('cbc:ID', s.ice).end(); // BT-29
  x.start('cac:PartyName').text('cbc:Name', s.legal_name).end();
  address(x, s.billing_address);
  const country = s.billing_address.country || 'MA';
  if (s.vat_number) {
    // BT-31, only where the organization has a VAT identifier.
    x.start('cac:PartyTaxScheme').text('cbc:CompanyID', vatIdentifier(s.vat_number, country));
    taxScheme(x, 'VAT');
    x.end();
  }
  const taxId = s.if_number ?? s.ice;
  if (taxId) {
    // BT-32, the tax registration identifier: the IF (identifiant fiscal), else the ICE.
    x.start('cac:PartyTaxScheme').text('cbc:CompanyID', taxId);
    taxScheme(x, s.if_number ? 'IF' : 'ICE');
    x.end();
  }
  x.start('cac:PartyLegalEntity').text('cbc:RegistrationName', s.legal_name); // BT-27
  if (s.ice) x.text('cbc:CompanyID', s.ice); // BT-30: the ICE is the legal registration identifier
  if (s.rc) x.text('cbc:CompanyLegalForm', `RC ${s.rc}`); // BT-33, additional legal information
  x.end();
  contact(x, s.phone, s.email);
  x.end().end();
}

function buyer(x: UblWriter, { invoice }: DocumentSource): void {
  const c = invoice.customer;
  x.start('cac:AccountingCustomerParty').start('cac:Party');
  if (c?.ice) x.start('cac:PartyIdentification').text('cbc:ID', c.ice).end(); // BT-46
  x.start('cac:PartyName').text('cbc:Name', c?.name ?? invoice.customer_name).end();
  address(x, c?.address ?? { street: null, city: null, postal_code: null, country: 'MA' });
  x.start('cac:PartyLegalEntity').text('cbc:RegistrationName', c?.name ?? invoice.customer_name); // BT-44
  if (c?.ice) x.text('cbc:CompanyID', c.ice); // BT-47
  x.end();
  contact(x, c?.phone ?? null, c?.email ?? null);
  x.end().end();
}

const NAMESPACES = [
  attribute('xmlns', 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2'),
  attribute('xmlns:cac', 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2'),
  attribute('xmlns:cbc', 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2'),
].join('');

/** The UBL 2.1 Invoice of an issued invoice, as a UTF-8 XML string. */
export function renderUbl(source: DocumentSource): string {
  const { invoice } = source;
  if (!invoice.invoice_number) throw new Error('UBL needs an issued invoice (it has no number yet)');
  const cur = attribute('currencyID', invoice.currency);
  const x = new UblWriter().start('Invoice', NAMESPACES);
  const amount = (name: string, value: string) => x.text(name, ublAmount(value), cur);

  x.text('cbc:CustomizationID', 'urn:cen.eu:en16931:2017'); // BT-24
  x.text('cbc:ID', invoice.invoice_number); // BT-1
  x.text('cbc:IssueDate', invoice.issue_date); // BT-2
  if (invoice.due_date) x.text('cbc:DueDate', invoice.due_date); // BT-9
  x.text('cbc:InvoiceTypeCode', '380'); // BT-3: commercial invoice
  if (invoice.notes) x.text('cbc:Note', invoice.notes); // BT-22
  x.text('cbc:DocumentCurrencyCode', invoice.currency); // BT-5
  x.text('cbc:BuyerReference', invoice.id); // BT-10: the API id, so the buyer's reply can name the invoice

  seller(x, source);
  buyer(x, source);

  // BT-20. Terms as written on the invoice; without them, say so (BR-CO-25 wants terms or a due date).
  const terms = invoice.payment_terms ?? (invoice.due_date ? null : 'Payment terms not stated');
  if (terms) x.start('cac:PaymentTerms').text('cbc:Note', terms).end();

  x.start('cac:TaxTotal');
  amount('cbc:TaxAmount', invoice.total_tax); // BT-110
  for (const entry of invoice.tax_breakdown) {
    x.start('cac:TaxSubtotal');
    amount('cbc:TaxableAmount', entry.taxable_amount); // BT-116
    amount('cbc:TaxAmount', entry.tax_amount); // BT-117
    x.start('cac:TaxCategory');
    x.text('cbc:ID', vatCategory(entry.rate)); // BT-118
    x.text('cbc:Percent', entry.rate); // BT-119
    taxScheme(x, 'VAT');
    x.end().end();
  }
  x.end();

  x.start('cac:LegalMonetaryTotal');
  amount('cbc:LineExtensionAmount', invoice.subtotal); // BT-106
  amount('cbc:TaxExclusiveAmount', invoice.subtotal); // BT-109: no document allowances or charges
  amount('cbc:TaxInclusiveAmount', invoice.total); // BT-112
  amount('cbc:PayableAmount', invoice.total); // BT-115: the issued document, before any payment
  x.end();

  const unit = attribute('unitCode', 'C62');
  for (const item of invoice.items) {
    x.start('cac:InvoiceLine');
    x.text('cbc:ID', String(item.position)); // BT-126
    x.text('cbc:InvoicedQuantity', item.quantity, unit); // BT-129, BT-130 (C62: one)
    amount('cbc:LineExtensionAmount', item.total); // BT-131
    x.start('cac:Item');
    x.text('cbc:Name', item.description); // BT-153
    x.start('cac:ClassifiedTaxCategory');
    x.text('cbc:ID', vatCategory(item.tax_rate)); // BT-151
    x.text('cbc:Percent', item.tax_rate); // BT-152
    taxScheme(x, 'VAT');
    x.end().end();
    x.start('cac:Price').text('cbc:PriceAmount', item.unit_price, cur).end(); // BT-146
    x.end();
  }
  return x.end().toString();
}
