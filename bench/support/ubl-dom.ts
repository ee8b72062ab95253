/**
 * The benchmark's UBL baseline: the same document built as xmlbuilder2 does
 * it, a DOM of every element, then serialized (src/documents/ubl.ts up to
 * 2026-11-24, which now writes the string directly; docs/performance.md
 * "Documents"). Both print the same bytes (the benchmark checks it).
 */
import { create } from 'xmlbuilder2';
import type { XMLBuilder } from 'xmlbuilder2/lib/interfaces.js';
import type { BillingAddress } from '../../src/commands/organization/events.ts';
import type { DocumentSource } from '../../src/documents/source.ts';
import { ublAmount, vatCategory } from '../../src/documents/ubl.ts';

const NS = {
  inv: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
};

/** BR-CO-09: a VAT identifier starts with its country code. */
function vatIdentifier(vat: string, country: string): string {
  const compact = vat.replace(/\s+/g, '');
  return /^[A-Z]{2}/.test(compact) ? compact : `${country}${compact}`;
}

function address(parent: XMLBuilder, a: BillingAddress): void {
  const el = parent.ele(NS.cac, 'cac:PostalAddress');
  if (a.street) el.ele(NS.cbc, 'cbc:StreetName').txt(a.street);
  if (a.city) el.ele(NS.cbc, 'cbc:CityName').txt(a.city);
  if (a.postal_code) el.ele(NS.cbc, 'cbc:PostalZone').txt(a.postal_code);
  // EN 16931 requires the country (BR-09, BR-11); Moroccan addresses default to MA.
  el.ele(NS.cac, 'cac:Country').ele(NS.cbc, 'cbc:IdentificationCode').txt(a.country || 'MA');
}

function taxScheme(parent: XMLBuilder, id: string): void {
  parent.ele(NS.cac, 'cac:TaxScheme').ele(NS.cbc, 'cbc:ID').txt(id);
}

function contact(parent: XMLBuilder, phone: string | null, email: string | null): void {
  if (!phone && !email) return;
  const el = parent.ele(NS.cac, 'cac:Contact');
  if (phone) el.ele(NS.cbc, 'cbc:Telephone').txt(phone);
  if (email) el.ele(NS.cbc, 'cbc:ElectronicMail').txt(email);
}

function seller(root: XMLBuilder, { seller: s }: DocumentSource): void {
  const party = root.ele(NS.cac, 'cac:AccountingSupplierParty').ele(NS.cac, 'cac:Party');
  if (s.ice) party.ele(NS.cac, 'cac:PartyIdentification').ele(NS.cbc, 'cbc:ID').txt(s.ice); // BT-29
  party.ele(NS.cac, 'cac:PartyName').ele(NS.cbc, 'cbc:Name').txt(s.legal_name);
  address(party, s.billing_address);
  const country = s.billing_address.country || 'MA';
  if (s.vat_number) {
    // BT-31, only where the organization has a VAT identifier.
    const vat = party.ele(NS.cac, 'cac:PartyTaxScheme');
    vat.ele(NS.cbc, 'cbc:CompanyID').txt(vatIdentifier(s.vat_number, country));
    taxScheme(vat, 'VAT');
  }
  const taxId = s.if_number ?? s.ice;
  if (taxId) {
    // BT-32, the tax registration identifier: the IF (identifiant fiscal), else the ICE.
    const tax = party.ele(NS.cac, 'cac:PartyTaxScheme');
    tax.ele(NS.cbc, 'cbc:CompanyID').txt(taxId);
    taxScheme(tax, s.if_number ? 'IF' : 'ICE');
  }
  const legal = party.ele(NS.cac, 'cac:PartyLegalEntity');
  legal.ele(NS.cbc, 'cbc:RegistrationName').txt(s.legal_name); // BT-27
  if (s.ice) legal.ele(NS.cbc, 'cbc:CompanyID').txt(s.ice); // BT-30: the ICE is the legal registration identifier
  if (s.rc) legal.ele(NS.cbc, 'cbc:CompanyLegalForm').txt(`RC ${s.rc}`); // BT-33, additional legal information
  contact(party, s.phone, s.email);
}

function buyer(root: XMLBuilder, { invoice }: DocumentSource): void {
  const c = invoice.customer;
  const party = root.ele(NS.cac, 'cac:AccountingCustomerParty').ele(NS.cac, 'cac:Party');
  if (c?.ice) party.ele(NS.cac, 'cac:PartyIdentification').ele(NS.cbc, 'cbc:ID').txt(c.ice); // BT-46
  party.ele(NS.cac, 'cac:PartyName').ele(NS.cbc, 'cbc:Name').txt(c?.name ?? invoice.customer_name);
  address(party, c?.address ?? { street: null, city: null, postal_code: null, country: 'MA' });
  const legal = party.ele(NS.cac, 'cac:PartyLegalEntity');
  legal.ele(NS.cbc, 'cbc:RegistrationName').txt(c?.name ?? invoice.customer_name); // BT-44
  if (c?.ice) legal.ele(NS.cbc, 'cbc:CompanyID').txt(c.ice); // BT-47
  contact(party, c?.phone ?? null, c?.email ?? null);
}

/** The UBL 2.1 Invoice, built as a DOM by xmlbuilder2 and serialized. */
export function renderUblDom(source: DocumentSource): string {
  const { invoice } = source;
  if (!invoice.invoice_number) throw new Error('UBL needs an issued invoice (it has no number yet)');
  const cur = { currencyID: invoice.currency };
  const amount = (parent: XMLBuilder, name: string, value: string) => parent.ele(NS.cbc, name, cur).txt(ublAmount(value));

  const root = create({ version: '1.0', encoding: 'UTF-8' })
    .ele(NS.inv, 'Invoice')
    .att('http://www.w3.org/2000/xmlns/', 'xmlns:cac', NS.cac)
    .att('http://www.w3.org/2000/xmlns/', 'xmlns:cbc', NS.cbc);
  const cbc = (name: string, text: string) => root.ele(NS.cbc, `cbc:${name}`).txt(text);

  cbc('CustomizationID', 'urn:cen.eu:en16931:2017'); // BT-24
  cbc('ID', invoice.invoice_number); // BT-1
  cbc('IssueDate', invoice.issue_date); // BT-2
  if (invoice.due_date) cbc('DueDate', invoice.due_date); // BT-9
  cbc('InvoiceTypeCode', '380'); // BT-3: commercial invoice
  if (invoice.notes) cbc('Note', invoice.notes); // BT-22
  cbc('DocumentCurrencyCode', invoice.currency); // BT-5
  cbc('BuyerReference', invoice.id); // BT-10: the API id, so the buyer's reply can name the invoice

  seller(root, source);
  buyer(root, source);

  // BT-20. Terms as written on the invoice; without them, say so (BR-CO-25 wants terms or a due date).
  const terms = invoice.payment_terms ?? (invoice.due_date ? null : 'Payment terms not stated');
  if (terms) root.ele(NS.cac, 'cac:PaymentTerms').ele(NS.cbc, 'cbc:Note').txt(terms);

  const taxTotal = root.ele(NS.cac, 'cac:TaxTotal');
  amount(taxTotal, 'cbc:TaxAmount', invoice.total_tax); // BT-110
  for (const entry of invoice.tax_breakdown) {
    const sub = taxTotal.ele(NS.cac, 'cac:TaxSubtotal');
    amount(sub, 'cbc:TaxableAmount', entry.taxable_amount); // BT-116
    amount(sub, 'cbc:TaxAmount', entry.tax_amount); // BT-117
    const category = sub.ele(NS.cac, 'cac:TaxCategory');
    category.ele(NS.cbc, 'cbc:ID').txt(vatCategory(entry.rate)); // BT-118
    category.ele(NS.cbc, 'cbc:Percent').txt(entry.rate); // BT-119
    taxScheme(category, 'VAT');
  }

  const totals = root.ele(NS.cac, 'cac:LegalMonetaryTotal');
  amount(totals, 'cbc:LineExtensionAmount', invoice.subtotal); // BT-106
  amount(totals, 'cbc:TaxExclusiveAmount', invoice.subtotal); // BT-109: no document allowances or charges
  amount(totals, 'cbc:TaxInclusiveAmount', invoice.total); // BT-112
  amount(totals, 'cbc:PayableAmount', invoice.total); // BT-115: the issued document, before any payment

  for (const item of invoice.items) {
    const line = root.ele(NS.cac, 'cac:InvoiceLine');
    line.ele(NS.cbc, 'cbc:ID').txt(String(item.position)); // BT-126
    line.ele(NS.cbc, 'cbc:InvoicedQuantity', { unitCode: 'C62' }).txt(item.quantity); // BT-129, BT-130 (C62: one)
    amount(line, 'cbc:LineExtensionAmount', item.total); // BT-131
    const it = line.ele(NS.cac, 'cac:Item');
    it.ele(NS.cbc, 'cbc:Name').txt(item.description); // BT-153
    const category = it.ele(NS.cac, 'cac:ClassifiedTaxCategory');
    category.ele(NS.cbc, 'cbc:ID').txt(vatCategory(item.tax_rate)); // BT-151
    category.ele(NS.cbc, 'cbc:Percent').txt(item.tax_rate); // BT-152
    taxScheme(category, 'VAT');
    line.ele(NS.cac, 'cac:Price').ele(NS.cbc, 'cbc:PriceAmount', cur).txt(item.unit_price); // BT-146
  }
  return root.end({ prettyPrint: true });
}
