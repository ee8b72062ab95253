/**
 * Every dashboard page in real Chromium: rendered for an owner with real
 * data (invoices through the API, a webhook delivery), checked by axe-core
 * (no serious or critical violation, WCAG 2 A and AA rules), usable at a
 * phone's width, in French by default and in English on request, and
 * (with DASHBOARD_SCREENSHOTS=dir) photographed for docs/dashboard.md.
 * Also: organizations provisioned, archived and restored from the page with
 * the API's errors inline, and invoices filtered and read with their history.
 */
import { AxeBuilder } from '@axe-core/playwright';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { insertKey } from '../../src/accounts/keys.ts';
import { bundleScopes } from '../../src/accounts/scopes.ts';
import { missingLabels } from '../../src/dashboard/i18n.ts';
import { addEndpoint } from '../../src/workers/webhooks/endpoints.ts';
import { call } from '../support/fixtures.ts';
import type { TestServer } from '../support/server.ts';
import { until } from '../support/wait.ts';
import { launchBrowser, newAccount, screenshot, signedIn, startDashboardServer, type TestAccount } from './support.ts';

async function axe(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

async function submit(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForLoadState('load'), page.click(selector)]);
}

describe('dashboard: every page (browser, axe-core)', function () {
  this.timeout(240_000);
  let server: TestServer;
  let browser: Browser;
  let acct: TestAccount;
  let invoiceId: string;
  let endpointId: string;
  let deliveryId: string;
  let customerId: string;

  before(async () => {
    server = await startDashboardServer();
    browser = await launchBrowser();
    acct = await newAccount(server, 'fiduciaire');
    const db = server.database.db;
    const { secret } = await insertKey(db, { accountId: acct.accountId, organizationId: acct.organizationId, scopes: bundleScopes('full_access'), name: 'ERP Sage' });
    endpointId = (await addEndpoint(db, { organizationId: acct.organizationId, url: 'http://127.0.0.1:9/hooks', events: ['invoice.created', 'customer.created'] }, { allowInsecure: true })).endpoint.id;
    const customer = await call(`${server.url}/customers`, secret, { method: 'POST', body: { name: 'Société Générale du Maroc', type: 'b2c', email: 'compta@sgm.ma' } });
    customerId = customer.body.data.id;
    for (const [i, date] of ['2026-10-01', '2026-10-15', '2026-11-02'].entries()) {
      const inv = await call(`${server.url}/invoices`, secret, {
        method: 'POST',
        body: { customer_id: customerId, issue_date: date, items: [{ description: `Conseil, lot ${i + 1}`, quantity: 2, unit_price: 1500 }, { description: 'Formation', quantity: 1, unit_price: 800, tax_rate: 10 }] },
      });
      expect(inv.status).to.equal(201);
      invoiceId = inv.body.data.id;
    }
    await call(`${server.url}/invoices/${invoiceId}`, secret, { method: 'PATCH', body: { notes: 'Merci pour votre confiance' } });
    await until(async () => Boolean(await db.selectFrom('webhook_deliveries').select('id').where('organization_id', '=', acct.organizationId).executeTakeFirst()), 30_000, 'a delivery');
    deliveryId = (await db.selectFrom('webhook_deliveries').select('id').where('organization_id', '=', acct.organizationId).executeTakeFirstOrThrow()).id;
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('has every label in French and English', () => {
    expect(missingLabels()).to.deep.equal([]);
  });

  describe('axe-core finds no serious or critical violation', () => {
    let context: BrowserContext;
    let page: Page;
    let o: string;
    before(async () => {
      ({ context, page } = await signedIn(browser, server.root, acct.users.owner));
      o = `${server.root}/dashboard/o/${acct.organizationId}`;
    });
    after(() => context?.close());

    it('on the sign-in page (signed out, French by default)', async () => {
      const anonymousContext = await browser.newContext();
      const anonymous = await anonymousContext.newPage();
      await anonymous.goto(`${server.root}/dashboard`);
      expect(await anonymous.getAttribute('html', 'lang')).to.equal('fr');
      expect(await axe(anonymous)).to.deep.equal([]);
      await screenshot(anonymous, 'signin');
      await anonymousContext.close();
    });

    const pages: [string, (o: string) => Promise<string> | string, number?][] = [
      ['organizations', () => `${server.root}/dashboard/organizations`],
      ['keys', (o) => `${o}/keys`],
      ['keys-revoke', async (o) => `${o}/keys/${(await server.database.db.selectFrom('api_keys').select('id').where('organization_id', '=', acct.organizationId).executeTakeFirstOrThrow()).id}/revoke`],
      ['webhooks', (o) => `${o}/webhooks`],
      ['webhooks-edit', (o) => `${o}/webhooks/${endpointId}`],
      ['webhooks-delete', (o) => `${o}/webhooks/${endpointId}/delete`],
      ['deliveries', (o) => `${o}/deliveries`],
      ['deliveries-detail', (o) => `${o}/deliveries/${deliveryId}`],
      ['invoices', (o) => `${o}/invoices`],
      ['invoices-detail', (o) => `${o}/invoices/${invoiceId}`],
      ['users', () => `${server.root}/dashboard/users`],
      ['not-found', (o) => `${o}/keys/01a20000-0000-7000-8000-00000000dead/revoke`, 404],
      ['not-decodable', (o) => `${o}/invoices/%ZZ`, 404],
    ];
    for (const [name, url, status] of pages) {
      it(`on ${name}`, async () => {
        await page.setViewportSize({ width: 1280, height: 900 });
        const res = await page.goto(await url(o));
        expect(res!.status()).to.equal(status ?? 200);
        expect(await axe(page)).to.deep.equal([]);
        await screenshot(page, name);
      });
    }

    it('on the page showing a new key secret once', async () => {
      await page.goto(`${o}/keys`);
      await submit(page, 'form[action$="/keys"] button[type=submit]');
      expect(await page.inputValue('#secret')).to.match(/^svc_test_/);
      expect(await axe(page)).to.deep.equal([]);
    });

    it('in English, on request', async () => {
      await page.goto(`${o}/invoices`);
      await submit(page, 'form[action="/dashboard/lang"] button');
      expect(await page.getAttribute('html', 'lang')).to.equal('en');
      expect(await page.locator('h1').textContent()).to.include('Invoices');
      expect(await axe(page)).to.deep.equal([]);
      await screenshot(page, 'invoices-en');
      await submit(page, 'form[action="/dashboard/lang"] button');
      expect(await page.locator('h1').textContent()).to.include('Factures');
    });

    // A phone's width: the page itself never scrolls sideways (wide tables scroll in their own box).
    for (const [name, path] of [['keys-phone', '/keys'], ['deliveries-phone', '/deliveries'], ['invoices-detail-phone', '/invoices/']]) {
      it(`at a phone's width: ${name}`, async () => {
        await page.setViewportSize({ width: 375, height: 740 });
        await page.goto(`${o}${path}${path.endsWith('/') ? invoiceId : ''}`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow).to.be.at.most(0);
        expect(await axe(page)).to.deep.equal([]);
        await screenshot(page, name);
      });
    }
  });

  it('lists invoices with the API filters, and shows one with its lines, totals and event history (who did what)', async () => {
    const { context, page } = await signedIn(browser, server.root, acct.users.viewer);
    const o = `${server.root}/dashboard/o/${acct.organizationId}`;
    await page.goto(`${o}/invoices`);
    expect(await page.locator('tbody tr').count()).to.equal(3);
    await page.fill('#f-from', '2026-10-10');
    await page.selectOption('#f-order', 'asc');
    await submit(page, 'form.filters button[type=submit]');
    expect(await page.locator('tbody tr').count()).to.equal(2);
    expect(await page.locator('tbody tr').first().textContent()).to.include('2026-10-15');
    await page.goto(`${o}/invoices?customer_id=nope&status=lost`);
    expect(await page.locator('.errors').textContent()).to.include('customer_id').and.to.include('status');
    expect(await page.inputValue('#f-customer')).to.equal('nope');

    await page.goto(`${o}/invoices/${invoiceId}`);
    const text = (await page.locator('main').textContent())!;
    expect(text).to.include('Conseil, lot 3').and.to.include('Formation');
    expect(text).to.include('3800.00 MAD').and.to.include('4480.00 MAD'); // HT 3000 + 800; TTC 3600 + 880
    const history = await page.locator('table').last().locator('tbody tr').allTextContents();
    expect(history).to.have.length(2);
    expect(history[0]).to.include('invoice.created').and.to.include('ERP Sage');
    expect(history[1]).to.include('invoice.updated');
    await context.close();
  });

  it('downloads the PDF and UBL XML of an issued invoice from its page', async () => {
    const issuer = await newAccount(server, 'professional', { ice: '001525417000071' });
    const { secret } = await insertKey(server.database.db, { accountId: issuer.accountId, organizationId: issuer.organizationId, scopes: bundleScopes('full_access') });
    const customer = await call(`${server.url}/customers`, secret, { method: 'POST', body: { name: 'Client Marrakech', type: 'b2c' } });
    const invoice = await call(`${server.url}/invoices`, secret, { method: 'POST', body: { customer_id: customer.body.data.id, issue_date: '2026-11-02', items: [{ description: 'Audit', quantity: 1, unit_price: 5000 }] } });
    const finalized = await call(`${server.url}/invoices/${invoice.body.data.id}/finalize`, secret, { method: 'POST' });
    expect(finalized.status).to.equal(200);
    const number = finalized.body.data.invoice_number;
    const { context, page } = await signedIn(browser, server.root, issuer.users.viewer);
    await page.goto(`${server.root}/dashboard/o/${issuer.organizationId}/invoices/${invoice.body.data.id}`);
    const pdfHref = await page.locator('a[href$="/pdf?locale=fr"]').getAttribute('href');
    const pdf = await page.request.get(`${server.root}${pdfHref}`);
    expect(pdf.status()).to.equal(200);
    expect(pdf.headers()['content-type']).to.equal('application/pdf');
    expect(pdf.headers()['content-disposition']).to.include(`${number}.pdf`);
    expect((await pdf.body()).subarray(0, 5).toString()).to.equal('%PDF-');
    const xml = await page.request.get(`${server.root}${await page.locator('a[href$="/xml"]').getAttribute('href')}`);
    expect(xml.status()).to.equal(200);
    expect(await xml.text()).to.include(`<cbc:ID>${number}</cbc:ID>`);
    // A draft has no document; another account's invoice is not found.
    const draft = await page.request.get(`${server.root}/dashboard/o/${acct.organizationId}/invoices/${invoiceId}/pdf`);
    expect(draft.status()).to.equal(404);
    await context.close();
  });

  it('provisions, archives and restores organizations with the same rules as the API', async () => {
    const { context, page } = await signedIn(browser, server.root, acct.users.owner);
    await page.goto(`${server.root}/dashboard/organizations`);
    await page.fill('#legal_name', 'Filiale Rabat SARL');
    await page.fill('#ice', '12345');
    await submit(page, 'form[action="/dashboard/organizations"] button[type=submit]');
    expect(await page.locator('#ice-error').textContent()).to.include('15 digits');
    expect(await page.inputValue('#legal_name')).to.equal('Filiale Rabat SARL');
    await page.fill('#ice', '');
    await submit(page, 'form[action="/dashboard/organizations"] button[type=submit]');
    expect(await page.locator('.flash').textContent()).to.include('Filiale Rabat SARL');
    const row = page.locator('tr', { hasText: 'Filiale Rabat SARL' });
    await Promise.all([page.waitForLoadState('load'), row.locator('form[action$="/archive"] button').click()]);
    expect(await row.textContent()).to.include('archivée');
    const id = (await row.locator('a').first().getAttribute('href'))!.split('/')[3];
    const events = await server.server.runtime.store.readStream(`organization-${id}`);
    expect(events.map((e: any) => e.type)).to.include('OrganizationArchived');
    expect(events.at(-1)!.metadata.actor).to.match(/^user:/);
    await submit(page, `form[action="/dashboard/organizations/${id}/restore"] button`);
    expect(await page.locator('tr', { hasText: 'Filiale Rabat SARL' }).textContent()).to.include('active');
    await context.close();
  });
});
