/**
 * UBL 2.1 / EN 16931: a corpus of issued invoices (several rates, 0 % VAT,
 * 0- and 3-decimal currencies, 500 lines, B2B and B2C, void, paid ...)
 * each validated by ../shared/validation/validate-ubl.sh (UBL 2.1 XSD +
 * the CEN EN 16931 schematron) with 0 fatal. Skipped, with a message, only
 * where ../shared (beside the repository) or its tools are absent.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { create } from 'xmlbuilder2';
import { renderUbl, ublAmount } from '../../src/documents/ubl.ts';
import { makeSource, manyLines, type SourceSpec } from './fixtures.ts';

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const validator = path.resolve(repoRoot, '../shared/validation/validate-ubl.sh');

const CORPUS: [string, SourceSpec][] = [
  ['one line at 20 %', { lines: [['Audit comptable', '1', '1000', '20']] }],
  ['four Moroccan rates', { lines: [['Conseil', '2', '1500', '20'], ['Transport', '1', '300', '14'], ['Hôtellerie', '2', '450.50', '10'], ['Eau', '10', '3.75', '7']] }],
  ['0 % only (category Z)', { lines: [['Livres scolaires', '12', '45.90', '0']] }],
  ['20 % and 0 % together', { lines: [['Formation', '1', '2500', '20'], ['Manuel', '5', '80', '0']] }],
  ['a rate with decimals (5.5 %)', { lines: [['Produit', '3', '99.99', '5.5']] }],
  ['rates 20, 18, 14, 13, 10, 7, 5.5, 0', { lines: ['20', '18', '14', '13', '10', '7', '5.5', '0'].map((r, i) => [`Ligne ${i + 1}`, '1.5', '133.33', r]) }],
  ['100 % rate', { lines: [['Taxe spéciale', '1', '10', '100']] }],
  ['round half up: 3 x 0.335', { lines: [['Vis', '3', '0.335', '20']] }],
  ['4-decimal quantities and prices', { lines: [['Carburant (litres)', '123.4567', '12.3456', '10'], ['Électricité (kWh)', '0.0001', '9999.9999', '14']] }],
  ['a free line beside a paid one', { lines: [['Installation offerte', '1', '0', '20'], ['Abonnement', '12', '199', '20']] }],
  // 1e12: the schematron compares some sums as doubles (BR-S-08 subtracts 1 from an untyped value), wrong past ~1e15.
  ['large amounts', { lines: [['Ouvrage d\'art', '1000', '1000000000', '20'], ['Études', '999999999.9999', '0.0001', '10']] }],
  ['KWD (3 decimals, amounts on the fils grid)', { currency: 'KWD', lines: [['Service', '2', '12.5', '20'], ['Pièce', '4', '0.25', '10']] }],
  ['BHD (3 decimals)', { currency: 'BHD', lines: [['Consulting', '3', '100.1', '10']] }],
  ['TND (3 decimals)', { currency: 'TND', lines: [['Prestation', '10', '0.5', '19']] }],
  ['JPY (0 decimals)', { currency: 'JPY', lines: [['Translation', '3', '12345', '10'], ['Review', '1', '999', '0']] }],
  ['EUR', { currency: 'EUR', lines: [['Licence annuelle', '1', '4800', '20']] }],
  ['USD', { currency: 'USD', lines: [['Support hours', '37.5', '85', '20']] }],
  ['500 lines', { lines: manyLines(500) }],
  ['100 lines, one rate', { lines: manyLines(100, ['20']) }],
  ['B2C without street or postal code', { b2b: false, lines: [['Réparation', '1', '350', '20']] }],
  ['B2C, 0 %', { b2b: false, lines: [['Médicament', '2', '27.4', '0']] }],
  ['void', { status: 'void', lines: [['Conseil', '1', '900', '20']] }],
  ['paid', { status: 'paid', lines: [['Conseil', '1', '900', '20'], ['Frais', '1', '50', '10']] }],
  ['sent', { status: 'sent', lines: [['Maintenance', '6', '420', '20']] }],
  ['seller with a VAT number (MA prefix added)', { seller: { vat_number: '40123456' }, lines: [['Export', '1', '100', '20']] }],
  ['seller with a prefixed VAT number', { seller: { vat_number: 'MA40123456' }, lines: [['Export', '1', '100', '20']] }],
  ['seller without IF (the ICE is the tax id)', { seller: { if_number: null }, lines: [['Conseil', '1', '100', '20']] }],
  ['seller without RC, phone or email', { seller: { rc: null, phone: null, email: null, website: null }, lines: [['Conseil', '1', '100', '20']] }],
  ['no due date, no payment terms', { dueDate: null, paymentTerms: null, lines: [['Conseil', '1', '100', '20']] }],
  ['due date without terms', { paymentTerms: null, lines: [['Conseil', '1', '100', '20']] }],
  ['notes and descriptions with XML specials', { notes: 'Livraison <urgent> & "fragile"', lines: [['Câble 3 > 2 & <blindé>', '10', '12.4', '20']] }],
  ['Arabic descriptions and buyer name', { customerName: 'شركة الأطلس للتجارة', lines: [['خدمات استشارية', '1', '5000', '20'], ['Formation en français', '2', '750', '10']] }],
  ['foreign buyer (FR)', { foreignBuyer: true, lines: [['Mission', '1', '8000', '0']], notes: 'Export de services' }],
];

describe('documents: UBL 2.1 corpus against EN 16931', function () {
  this.timeout(600_000);
  let dir: string;

  before(function () {
    if (!existsSync(validator)) {
      console.warn(`      skipped: ${validator} is absent (the shared validation kit sits beside the repository)`);
      this.skip();
    }
    dir = mkdtempSync(path.join(tmpdir(), 'ubl-corpus-'));
  });
  after(() => dir && rmSync(dir, { recursive: true, force: true }));

  it(`validates ${CORPUS.length} invoices with 0 fatal`, async function () {
    expect(CORPUS.length).to.be.at.least(30);
    const failures: string[] = [];
    const queue = CORPUS.map(([name, spec], i) => ({ name, file: path.join(dir, `${String(i).padStart(2, '0')}.xml`), spec }));
    for (const { file, spec } of queue) writeFileSync(file, renderUbl(makeSource(spec)));
    const worker = async () => {
      for (let job = queue.shift(); job; job = queue.shift()) {
        const { stdout } = await run(validator, [job.file], { maxBuffer: 1 << 24 }).catch((err) => {
          if (err.code === 2) throw new Error(`validator unusable: ${err.stderr}`);
          return { stdout: String(err.stdout) };
        });
        const last = stdout.trim().split('\n').pop() ?? '';
        if (!/^UBL: xsd ok, en16931 0 fatal/.test(last)) failures.push(`${job.name}: ${stdout}`);
      }
    };
    await Promise.all([worker(), worker()]);
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });
});

describe('documents: UBL content', () => {
  it('copies the totals code\'s figures: lines, VAT per rate, totals', () => {
    const source = makeSource({ lines: [['A', '3', '0.335', '20'], ['B', '2', '10', '10'], ['C', '1', '5', '0']] });
    const xml = renderUbl(source).replace(/>\s+</g, '><');
    const { invoice } = source;
    expect(invoice.tax_breakdown.map((t) => t.rate)).to.deep.equal(['20', '10', '0']);
    for (const t of invoice.tax_breakdown) {
      expect(xml).to.include(`<cbc:TaxableAmount currencyID="MAD">${t.taxable_amount}</cbc:TaxableAmount><cbc:TaxAmount currencyID="MAD">${t.tax_amount}</cbc:TaxAmount>`);
    }
    expect(xml).to.include(`<cbc:LineExtensionAmount currencyID="MAD">1.01</cbc:LineExtensionAmount>`);
    expect(xml).to.include(`<cbc:TaxInclusiveAmount currencyID="MAD">${invoice.total}</cbc:TaxInclusiveAmount>`);
    expect(xml).to.include(`<cbc:PayableAmount currencyID="MAD">${invoice.total}</cbc:PayableAmount>`);
    expect(xml).to.include('<cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>');
  });

  it('a void or paid invoice\'s XML is the issued document, unchanged', () => {
    const lines: SourceSpec['lines'] = [['Conseil', '1', '900', '20']];
    const issued = renderUbl(makeSource({ lines }));
    expect(renderUbl(makeSource({ lines, status: 'void' }))).to.equal(issued);
    expect(renderUbl(makeSource({ lines, status: 'paid' }))).to.equal(issued);
  });

  it('seller identifiers: ICE legal id, IF (else ICE) tax id, VAT id only where there is one', () => {
    const plain = renderUbl(makeSource({ lines: [['A', '1', '1', '20']] })).replace(/>\s+</g, '><');
    expect(plain).to.include('<cbc:CompanyID>40123456</cbc:CompanyID><cac:TaxScheme><cbc:ID>IF</cbc:ID>');
    expect(plain).not.to.include('<cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:PartyTaxScheme>');
    const noIf = renderUbl(makeSource({ seller: { if_number: null }, lines: [['A', '1', '1', '20']] })).replace(/>\s+</g, '><');
    expect(noIf).to.include('<cbc:CompanyID>001525896000088</cbc:CompanyID><cac:TaxScheme><cbc:ID>ICE</cbc:ID>');
    const vat = renderUbl(makeSource({ seller: { vat_number: '40123456' }, lines: [['A', '1', '1', '20']] }));
    expect(vat).to.include('<cbc:CompanyID>MA40123456</cbc:CompanyID>');
  });

  it('every corpus document is well-formed XML that xmlbuilder2 parses and prints back byte for byte', () => {
    for (const [name, spec] of CORPUS) {
      const xml = renderUbl(makeSource(spec));
      expect(create(xml).end({ prettyPrint: true }), name).to.equal(xml);
    }
  });

  it('text that looks like an entity reference is escaped too, and reads back as written', () => {
    const description = 'R&D &nbsp; &amp; &#169; <b> "x" \'y\' 3 > 2';
    const xml = renderUbl(makeSource({ notes: 'A&B &lt;', customerName: 'Dupont & Fils &co;', lines: [[description, '1', '10', '20']] }));
    // Exactly one level of escaping: the literal text, as written.
    expect(xml).to.include(`<cbc:Name>R&amp;D &amp;nbsp; &amp;amp; &amp;#169; &lt;b&gt; "x" 'y' 3 &gt; 2</cbc:Name>`);
    // Read back by libxml2 (xmllint, installed by .ci/run), as a reader gets it.
    const read = (xpath: string) => execFileSync('xmllint', ['--xpath', `string(${xpath})`, '-'], { input: xml }).toString().replace(/\n$/, ''); // xmllint ends with a newline
    expect(read("//*[local-name()='Item']/*[local-name()='Name']")).to.equal(description);
    expect(read("/*/*[local-name()='Note']")).to.equal('A&B &lt;');
    expect(read("//*[local-name()='PartyName']/*[local-name()='Name'][.!='Atlas Conseil SARL']")).to.equal('Dupont & Fils &co;');
  });

  it('amounts: zeros past the second decimal are dropped, nothing is rounded', () => {
    expect(ublAmount('1.250')).to.equal('1.25');
    expect(ublAmount('1.235')).to.equal('1.235');
    expect(ublAmount('1200.00')).to.equal('1200.00');
    expect(ublAmount('1200')).to.equal('1200');
    expect(ublAmount('0.000')).to.equal('0.00');
  });
});
