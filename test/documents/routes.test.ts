/**
 * GET /invoices/{id}/pdf and /xml over real HTTP on a real server
 * (PostgreSQL, Chromium): media types and Content-Disposition, locale
 * validation, drafts, other organizations, the export scope, the cache
 * (concurrent requests render once, a new version renders again), and the
 * browser's faults: missing (503, the rest of the API unaffected, /readyz
 * says so) and crashed (relaunched on the next request).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { Scope } from '../../src/api/route.ts';
import { documentsFor } from '../../src/documents/for-runtime.ts';
import { createKey } from '../support/fixtures.ts';
import { expectError, invoicesClient, line, type InvoicesClient } from '../invoices/support.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/wait.ts';
import { pdfPages } from './pdf-support.ts';

const validator = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..', '../shared/validation/validate-ubl.sh');

async function raw(url: string, secret: string) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${secret}` } });
  const body = Buffer.from(await res.arrayBuffer());
  let json: any = null;
  if ((res.headers.get('content-type') ?? '').includes('json')) json = JSON.parse(body.toString('utf8'));
  return { status: res.status, headers: res.headers, body, json };
}

async function sellerProfile(server: TestServer, organizationId: string): Promise<void> {
  await server.database.db
    .updateTable('organizations')
    .set({ rc: '412345 Casablanca', if_number: '40123456', phone: '+212 522 20 30 40', billing_address: JSON.stringify({ street: '27 boulevard Mohammed V', city: 'Casablanca', postal_code: '20250', country: 'MA' }) })
    .where('id', '=', organizationId)
    .execute();
}

describe('documents: GET /invoices/{id}/pdf and /xml', function () {
  this.timeout(300_000);
  let server: TestServer;
  let api: InvoicesClient;
  let customer: any;
  const doc = (id: string, kind: 'pdf' | 'xml', query = '') => raw(`${api.url}/invoices/${id}/${kind}${query}`, api.secret);

  before(async () => {
    server = await startTestServer();
    api = await invoicesClient(server);
    await sellerProfile(server, api.tenant.organizationId);
    customer = await api.customer({ name: 'Société Marocaine des Industries du Sud SA' });
  });
  after(() => server?.stop());

  it('a finalized invoice: PDF in fr (default), en and ar, XML, with media types and Content-Disposition', async () => {
    const invoice = await api.finalized(customer.id, { items: [line('Audit', 2, 1500, 20), line('Livres', 3, 80, 0)] });
    const fr = await doc(invoice.id, 'pdf');
    expect(fr.status, fr.json && JSON.stringify(fr.json)).to.equal(200);
    expect(fr.headers.get('content-type')).to.equal('application/pdf');
    expect(fr.headers.get('content-disposition')).to.equal(`attachment; filename="${invoice.invoice_number}.pdf"`);
    expect(fr.body.subarray(0, 5).toString()).to.equal('%PDF-');
    const text = (await pdfPages(fr.body)).join(' ').replace(/\s+/g, ' ');
    expect(text).to.include(invoice.invoice_number).and.include(customer.ice).and.include('Atlas Conseil SARL').and.include('IF 40123456');
    expect(text).to.include('3 840,00 DH'); // 3,000 + 240 HT, VAT 600 -> 3,840.00 TTC
    for (const locale of ['en', 'ar']) {
      const res = await doc(invoice.id, 'pdf', `?locale=${locale}`);
      expect(res.status).to.equal(200);
      expect(res.body.equals(fr.body)).to.equal(false);
    }
    const xml = await doc(invoice.id, 'xml');
    expect(xml.status).to.equal(200);
    expect(xml.headers.get('content-type')).to.equal('application/xml; charset=utf-8');
    expect(xml.headers.get('content-disposition')).to.equal(`attachment; filename="${invoice.invoice_number}.xml"`);
    const body = xml.body.toString('utf8');
    for (const t of invoice.tax_breakdown) expect(body).to.include(`<cbc:TaxAmount currencyID="MAD">${t.tax_amount}</cbc:TaxAmount>`);
    expect(body).to.include(`<cbc:PayableAmount currencyID="MAD">${invoice.total}</cbc:PayableAmount>`);
    if (existsSync(validator)) {
      const dir = mkdtempSync(path.join(tmpdir(), 'ubl-http-'));
      try {
        writeFileSync(path.join(dir, 'i.xml'), body);
        const { stdout } = await promisify(execFile)(validator, [path.join(dir, 'i.xml')]);
        expect(stdout).to.match(/UBL: xsd ok, en16931 0 fatal/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  it('locale outside fr/en/ar: VALIDATION_ERROR on locale', async () => {
    const invoice = await api.finalized(customer.id);
    const res = await doc(invoice.id, 'pdf', '?locale=de');
    expect(res.status).to.equal(400);
    expect(res.json.error.code).to.equal('VALIDATION_ERROR');
    expect(res.json.error.details.fields.map((f: { field: string }) => f.field)).to.deep.equal(['locale']);
  });

  it('a draft: PDF_NOT_AVAILABLE and XML_NOT_AVAILABLE (409)', async () => {
    const draft = await api.draft(customer.id);
    const pdf = await doc(draft.id, 'pdf');
    expect([pdf.status, pdf.json.error.code]).to.deep.equal([409, 'PDF_NOT_AVAILABLE']);
    const xml = await doc(draft.id, 'xml');
    expect([xml.status, xml.json.error.code]).to.deep.equal([409, 'XML_NOT_AVAILABLE']);
  });

  it('another organization\'s invoice, an unknown id, a malformed id: 404', async () => {
    const other = await invoicesClient(server);
    const theirs = await other.finalized((await other.customer()).id);
    for (const id of [theirs.id, '0193a1b2-0000-7000-8000-000000000000', 'not-a-uuid']) {
      for (const kind of ['pdf', 'xml'] as const) {
        const res = await doc(id, kind);
        expect([res.status, res.json?.error?.code], `${kind} ${id}`).to.deep.equal([404, 'NOT_FOUND']);
      }
    }
  });

  it('the key needs invoices:export (and invoices:export alone is enough)', async () => {
    const invoice = await api.finalized(customer.id);
    const key = (scopes: Scope[]) => createKey(server.database.db, { accountId: api.tenant.accountId, organizationId: api.tenant.organizationId, scopes });
    const reader = await key(['invoices:read', 'invoices:write']);
    for (const kind of ['pdf', 'xml']) {
      const res = await raw(`${api.url}/invoices/${invoice.id}/${kind}`, reader.secret);
      expect([res.status, res.json.error.code]).to.deep.equal([403, 'FORBIDDEN']);
      expect(res.json.error.details.required_scopes).to.deep.equal(['invoices:export']);
    }
    const exporter = await key(['invoices:export']);
    expect((await raw(`${api.url}/invoices/${invoice.id}/xml`, exporter.secret)).status).to.equal(200);
    expect((await raw(`${api.url}/invoices/${invoice.id}/pdf`, exporter.secret)).status).to.equal(200);
  });

  it('renders once for concurrent requests, serves the cache after, renders again once paid (PAID mark)', async () => {
    const service = documentsFor(server.server.runtime);
    const invoice = await api.finalized(customer.id);
    const renders = service.cache.renders;
    const answers = await Promise.all(Array.from({ length: 6 }, () => doc(invoice.id, 'pdf', '?locale=ar')));
    expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
    expect(answers.every((a) => a.body.equals(answers[0].body))).to.equal(true);
    expect(service.cache.renders - renders).to.equal(1);
    const hits = service.cache.hits;
    expect((await doc(invoice.id, 'pdf', '?locale=ar')).body.equals(answers[0].body)).to.equal(true);
    expect(service.cache.hits - hits).to.equal(1);
    const issuedXml = (await doc(invoice.id, 'xml')).body.toString();

    const paid = await api.action(invoice.id, 'pay', { paid_at: '2026-03-20T10:00:00Z' });
    expect(paid.status).to.equal(200);
    const after = await doc(invoice.id, 'pdf');
    expect(service.cache.renders - renders).to.equal(2);
    expect((await pdfPages(after.body, { raw: true })).join(' ')).to.include('PAYÉE').and.include('le 20/03/2026');
    expect((await doc(invoice.id, 'xml')).body.toString()).to.equal(issuedXml); // the issued document, unchanged
  });

  it('a void invoice: PDF marked ANNULÉE, XML unchanged', async () => {
    const invoice = await api.finalized(customer.id);
    const issuedXml = (await doc(invoice.id, 'xml')).body.toString();
    expect((await api.action(invoice.id, 'void', { reason: 'Erreur de client' })).status).to.equal(200);
    const pdf = await doc(invoice.id, 'pdf');
    expect((await pdfPages(pdf.body, { raw: true })).join(' ')).to.include('ANNULÉE');
    expect((await doc(invoice.id, 'xml')).body.toString()).to.equal(issuedXml);
  });

  it('/readyz reports the browser; a crashed browser is relaunched by the next request', async () => {
    const service = documentsFor(server.server.runtime);
    const invoice = await api.finalized(customer.id);
    expect((await doc(invoice.id, 'pdf')).status).to.equal(200);
    let ready = await (await fetch(`${server.root}/readyz`)).json();
    expect(ready.checks.pdf.state).to.equal('ready');
    expect(ready.checks.pdf.version).to.match(/^\d+\./);
    const launches = service.printer.status().launches;

    const browser = await service.printer.browser();
    const cdp = await browser.target().createCDPSession();
    await cdp.send('Browser.crash').catch(() => {}); // the connection dies with the browser
    await until(() => !browser.connected, 30_000);
    ready = await (await fetch(`${server.root}/readyz`)).json();
    expect(ready.status).to.equal('ready'); // the rest of the API is fine
    expect(ready.checks.pdf.state).to.equal('unavailable');

    const res = await doc(invoice.id, 'pdf', '?locale=en');
    expect(res.status, res.json && JSON.stringify(res.json)).to.equal(200);
    expect(service.printer.status().launches).to.equal(launches + 1);
  });
});

describe('documents: without Chromium', function () {
  this.timeout(120_000);
  let server: TestServer;
  let api: InvoicesClient;

  before(async () => {
    server = await startTestServer({ env: { CHROMIUM_PATH: '/nonexistent/chromium' } });
    api = await invoicesClient(server);
  });
  after(() => server?.stop());

  it('the PDF answers 503 PDF_RENDERER_UNAVAILABLE; XML, reads and /readyz keep working', async () => {
    const invoice = await api.finalized((await api.customer()).id);
    const res = await raw(`${api.url}/invoices/${invoice.id}/pdf`, api.secret);
    expectError({ status: res.status, headers: res.headers, body: res.json }, 503, 'PDF_RENDERER_UNAVAILABLE');
    expect(res.json.error.message).to.include('CHROMIUM_PATH=/nonexistent/chromium');
    expect((await raw(`${api.url}/invoices/${invoice.id}/xml`, api.secret)).status).to.equal(200);
    expect((await api.get(invoice.id)).status).to.equal(200);
    const readyz = await fetch(`${server.root}/readyz`);
    expect(readyz.status).to.equal(200);
    const ready = await readyz.json();
    expect(ready.checks.pdf.state).to.equal('unavailable');
    // The public probe shows the state, not the error text or the path (docs/operations.md "Probes").
    expect(ready.checks.pdf).to.deep.equal({ state: 'unavailable', version: null });
    expect(JSON.stringify(ready)).not.to.include('/nonexistent');
  });
});

describe('documents: PDF_PAGES, the warm pages printing at once', function () {
  this.timeout(300_000);

  // Four distinct invoices' PDFs asked for at once: each is a render, so a printer with room for them opens a page each.
  const concurrentRenders = async (env: Record<string, string>) => {
    const server = await startTestServer({ env });
    try {
      const api = await invoicesClient(server);
      const customer = await api.customer();
      const invoices = [];
      for (let i = 0; i < 4; i++) invoices.push(await api.finalized(customer.id));
      const answers = await Promise.all(invoices.map((inv) => raw(`${api.url}/invoices/${inv.id}/pdf`, api.secret)));
      expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200, 200]);
      const service = documentsFor(server.server.runtime);
      expect(service.cache.renders).to.equal(4);
      return service.printer.status().pages_opened;
    } finally {
      await server.stop();
    }
  };

  it('one page by default: concurrent renders wait for it', async () => {
    expect(await concurrentRenders({})).to.equal(1);
  });

  it('PDF_PAGES=2: two pages print at once', async () => {
    expect(await concurrentRenders({ PDF_PAGES: '2' })).to.equal(2);
  });
});
