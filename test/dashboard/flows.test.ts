/**
 * The dashboard's two main journeys in real Chromium against a real server:
 * an API key's whole life (created with a bundle, secret copied from the
 * page, used on the API, revoked, refused), and a webhook endpoint's
 * (added, test event, failures and retries, replay).
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { insertKey } from '../../src/accounts/keys.ts';
import { bundleScopes } from '../../src/accounts/scopes.ts';
import { call } from '../support/fixtures.ts';
import type { TestServer } from '../support/server.ts';
import { until } from '../support/wait.ts';
import { launchBrowser, newAccount, screenshot, signedIn, startDashboardServer, type TestAccount } from './support.ts';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A local webhook receiver answering `status` (changeable), keeping every request. */
async function receiver(): Promise<{ url: string; received: Received[]; setStatus(s: number): void; close(): Promise<void> }> {
  let status = 200;
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'receiver is failing on purpose');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    setStatus: (s) => (status = s),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

async function submit(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForLoadState('load'), page.click(selector)]);
}

describe('dashboard: key and webhook journeys (browser)', function () {
  this.timeout(180_000);
  let server: TestServer;
  let browser: Browser;
  let acct: TestAccount;

  before(async () => {
    server = await startDashboardServer();
    browser = await launchBrowser();
    acct = await newAccount(server);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('an owner creates a key with the invoicing bundle, copies its secret, calls the API (200), revokes it, and the next call answers 401', async () => {
    const { context, page } = await signedIn(browser, server.root, acct.users.owner);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.root });
    const keysUrl = `${server.root}/dashboard/o/${acct.organizationId}/keys`;
    expect(page.url()).to.equal(keysUrl);
    await page.fill('#key-name', 'Compta ERP');
    await page.check('input[name=bundle][value=invoicing]');
    await submit(page, 'form[action$="/keys"] button[type=submit]');

    // The secret, shown once, copied with the page's button.
    const shown = await page.inputValue('#secret');
    expect(shown).to.match(/^svc_test_[0-9A-Za-z]{43}$/);
    expect(page.url()).not.to.include(shown);
    await screenshot(page, 'keys-created');
    await page.click('button[data-copy=secret]');
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).to.equal(shown);

    const ok = await call(`${server.url}/invoices`, copied);
    expect(ok.status).to.equal(200);

    // Never shown again: the list shows only its prefix and last 4 characters.
    await page.goto(keysUrl);
    expect(await page.content()).not.to.include(copied);
    const row = page.locator('tr', { hasText: 'Compta ERP' });
    expect(await row.textContent()).to.include(`svc_test_…${copied.slice(-4)}`).and.to.include('Facturation');
    await screenshot(page, 'keys');

    await Promise.all([page.waitForLoadState('load'), row.getByRole('link', { name: /Révoquer/ }).click()]);
    expect(await page.locator('main').textContent()).to.include('définitive');
    await screenshot(page, 'keys-revoke');
    await submit(page, 'form[action$="/revoke"] button[type=submit]');
    expect(await page.locator('.flash').textContent()).to.include('Clé révoquée');
    expect(await page.locator('tr', { hasText: 'Compta ERP' }).textContent()).to.include('révoquée');

    const refused = await call(`${server.url}/invoices`, copied);
    expect(refused.status).to.equal(401);
    expect(refused.body.error.code).to.equal('UNAUTHORIZED');
    const audit = await server.database.db.selectFrom('dashboard_audit').select(['action']).where('account_id', '=', acct.accountId).execute();
    expect(audit.map((a) => a.action)).to.include.members(['api_key.created', 'api_key.revoked']);
    await context.close();
  });

  it("shows and enforces the plan's key limit", async () => {
    const other = await newAccount(server);
    for (let i = 0; i < 10; i++) {
      await insertKey(server.database.db, { accountId: other.accountId, organizationId: other.organizationId, scopes: bundleScopes('read_only') });
    }
    const { context, page } = await signedIn(browser, server.root, other.users.admin);
    expect(await page.locator('.meter').textContent()).to.include('Clés actives : 10 sur 10');
    expect(await page.locator('.notice.warn').textContent()).to.include('limite');
    expect(await page.locator('form[action$="/keys"]').count()).to.equal(0);
    const token = await page.locator('input[name=_csrf]').first().inputValue();
    const forced = await page.request.post(page.url(), { form: { bundle: 'read_only', mode: 'test', _csrf: token } });
    expect(forced.status()).to.equal(403);
    expect(await forced.text()).to.include('10 active keys');
    await context.close();
  });

  it('adds an endpoint to a local receiver, sends a test event (succeeded), sees a failing delivery retried, replays it, and sees it succeed', async () => {
    const hook = await receiver();
    try {
      const { context, page } = await signedIn(browser, server.root, acct.users.admin);
      const base = `${server.root}/dashboard/o/${acct.organizationId}`;
      await page.goto(`${base}/webhooks`);
      await page.fill('#wh-url', hook.url);
      await submit(page, 'form[action$="/webhooks"] button[type=submit]');
      const secret = await page.inputValue('#secret');
      expect(secret).to.match(/^whsec_/);
      await screenshot(page, 'webhooks-secret');
      const endpointId = (await page.getAttribute('a.button[href*="/webhooks/"]', 'href'))!.split('/').pop()!;

      // Test event from the endpoint's page.
      await page.goto(`${base}/webhooks/${endpointId}`);
      await screenshot(page, 'webhooks-edit');
      await page.selectOption('#test-event', 'invoice.paid');
      await submit(page, 'form[action$="/test"] button[type=submit]');
      expect(page.url()).to.include(`/deliveries?endpoint=${endpointId}`);
      expect(await page.locator('.flash').textContent()).to.include('invoice.paid');
      const testRow = page.locator('tbody tr', { hasText: 'invoice.paid' });
      expect(await testRow.locator('[data-status]').getAttribute('data-status')).to.equal('succeeded');
      // The receiver got it, signed with the secret the page showed (convention A).
      expect(hook.received).to.have.length(1);
      const [got] = hook.received;
      const expected = createHmac('sha256', secret).update(`${got.headers['x-webhook-timestamp']}.${got.body}`).digest('hex');
      expect(got.headers['x-webhook-signature']).to.equal(`v1=${expected}`);
      await Promise.all([page.waitForLoadState('load'), testRow.locator('a').first().click()]);
      expect(await page.locator('table.attempts tbody tr').count()).to.equal(1);
      expect(await page.locator('table.attempts tbody').textContent()).to.include('200');

      // A real event while the receiver fails: 6 attempts, then failed.
      hook.setStatus(500);
      const key = await insertKey(server.database.db, { accountId: acct.accountId, organizationId: acct.organizationId, scopes: bundleScopes('full_access') });
      const created = await call(`${server.url}/customers`, key.secret, { method: 'POST', body: { name: 'Client Retry', type: 'b2c' } });
      expect(created.status).to.equal(201);
      let failedRow = page.locator('tbody tr', { hasText: 'customer.created' });
      await until(async () => {
        await page.goto(`${base}/deliveries?status=failed`);
        return (await failedRow.count()) === 1;
      }, 60_000, 'the customer.created delivery failed');
      expect(await failedRow.locator('td').nth(2).textContent()).to.equal('6');
      expect(await failedRow.textContent()).to.include('HTTP 500');
      await screenshot(page, 'deliveries');
      await Promise.all([page.waitForLoadState('load'), failedRow.locator('a').first().click()]);
      expect(await page.locator('table.attempts tbody tr').count()).to.equal(6);
      expect(await page.locator('table.attempts tbody').textContent()).to.include('receiver is failing on purpose');

      // The receiver recovers; replay from the page.
      hook.setStatus(200);
      await submit(page, 'form[action$="/replay"] button[type=submit]');
      expect(await page.locator('.flash').textContent()).to.include('remise en file');
      await until(async () => {
        await page.reload();
        return (await page.locator('dd [data-status]').getAttribute('data-status')) === 'succeeded';
      }, 30_000, 'the replayed delivery succeeded');
      expect(await page.locator('table.attempts tbody tr').count()).to.equal(7);
      await screenshot(page, 'deliveries-detail');
      failedRow = page.locator('tbody tr', { hasText: 'customer.created' });
      await page.goto(`${base}/deliveries?status=succeeded&event=customer.created`);
      expect(await failedRow.count()).to.equal(1);
      await context.close();
    } finally {
      await hook.close();
    }
  });

  it('edits, disables, rotates and deletes an endpoint; field errors keep the input', async () => {
    const { context, page } = await signedIn(browser, server.root, acct.users.admin);
    const base = `${server.root}/dashboard/o/${acct.organizationId}`;
    await page.goto(`${base}/webhooks`);
    await page.fill('#wh-url', 'ftp://nope.example.ma/x');
    // Uncheck every event: two problems, the first is reported with the URL kept.
    for (const box of await page.locator('input[name=events]').all()) await box.uncheck();
    await page.locator('#wh-url').evaluate((el) => el.setAttribute('type', 'text')); // let the server judge it
    await submit(page, 'form[action$="/webhooks"] button[type=submit]');
    expect(await page.locator('.errors').textContent()).to.include('give at least one event');
    expect(await page.inputValue('#wh-url')).to.equal('ftp://nope.example.ma/x');
    await page.check('input[name=events][value="invoice.paid"]');
    await submit(page, 'form[action$="/webhooks"] button[type=submit]');
    expect(await page.locator('.errors').textContent()).to.match(/url/i);

    await page.fill('#wh-url', 'http://127.0.0.1:9/hooks');
    await page.check('input[name=convention][value=B]');
    await submit(page, 'form[action$="/webhooks"] button[type=submit]');
    const first = await page.inputValue('#secret');
    await submit(page, 'a.button[href*="/webhooks/"]').catch(() => {});
    const url = page.url();
    const id = url.split('/').pop()!;
    const row = () => server.database.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect((await row()).convention).to.equal('B');
    expect((await row()).events).to.deep.equal(['invoice.paid']);

    await page.check('input[name=events][value="invoice.voided"]');
    await submit(page, 'form button[value=save]');
    expect((await row()).events).to.have.members(['invoice.paid', 'invoice.voided']);
    await submit(page, 'button[value=disable]');
    expect((await row()).enabled).to.equal(false);
    await submit(page, 'button[value=enable]');
    expect((await row()).enabled).to.equal(true);

    page.once('dialog', (d) => void d.accept());
    await submit(page, 'form[action$="/rotate"] button');
    const second = await page.inputValue('#secret');
    expect(second).to.match(/^whsec_/).and.not.equal(first);
    expect((await row()).secret_hint).to.equal(`whsec_...${second.slice(-4)}`);

    await page.goto(`${base}/webhooks/${id}/delete`);
    await screenshot(page, 'webhooks-delete');
    await submit(page, 'form[action$="/delete"] button[type=submit]');
    expect(await page.locator('.flash').textContent()).to.include('supprimé');
    expect(await server.database.db.selectFrom('webhook_endpoints').select('id').where('id', '=', id).executeTakeFirst()).to.equal(undefined);
    await context.close();
  });
});
