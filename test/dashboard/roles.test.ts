/**
 * Roles and tenants, enforced by the server: a viewer sees no change
 * button and every forged POST is refused (403) with nothing changed; an
 * admin cannot manage organizations or users; a user of account B gets the
 * 404 page for every URL of account A (organization, key, endpoint,
 * delivery), GET or POST.
 */
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { insertKey } from '../../src/accounts/keys.ts';
import { bundleScopes } from '../../src/accounts/scopes.ts';
import { addEndpoint } from '../../src/workers/webhooks/endpoints.ts';
import type { TestServer } from '../support/server.ts';
import { csrfOf, launchBrowser, newAccount, signedIn, startDashboardServer, type TestAccount } from './support.ts';

describe('dashboard: roles and tenants (browser)', function () {
  this.timeout(180_000);
  let server: TestServer;
  let browser: Browser;
  let a: TestAccount;
  let b: TestAccount;
  let keyId: string;
  let endpointId: string;
  let deliveryId: string;
  let base: string;

  before(async () => {
    server = await startDashboardServer();
    browser = await launchBrowser();
    [a, b] = [await newAccount(server), await newAccount(server)];
    const db = server.database.db;
    keyId = (await insertKey(db, { accountId: a.accountId, organizationId: a.organizationId, scopes: bundleScopes('read_only'), name: 'Lecture' })).key.id;
    endpointId = (await addEndpoint(db, { organizationId: a.organizationId, url: 'http://127.0.0.1:9/hooks' }, { allowInsecure: true })).endpoint.id;
    deliveryId = '01a20000-0000-7000-8000-000000000001';
    await db
      .insertInto('webhook_deliveries')
      .values({ id: deliveryId, endpoint_id: endpointId, organization_id: a.organizationId, event_id: deliveryId, event_type: 'invoice.paid', body: '{}', status: 'failed', attempt_count: 6 })
      .execute();
    base = `${server.root}/dashboard/o/${a.organizationId}`;
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  const snapshot = async () => {
    const db = server.database.db;
    return {
      keys: await db.selectFrom('api_keys').select(['id', 'revoked_at']).where('organization_id', '=', a.organizationId).orderBy('id').execute(),
      endpoint: await db.selectFrom('webhook_endpoints').select(['secret_hint', 'enabled', 'events']).where('id', '=', endpointId).executeTakeFirst(),
      delivery: await db.selectFrom('webhook_deliveries').select(['status', 'attempt_count']).where('id', '=', deliveryId).executeTakeFirst(),
      orgs: await db.selectFrom('organizations').select(['id', 'archived']).where('account_id', '=', a.accountId).orderBy('id').execute(),
      users: await db.selectFrom('dashboard_users').select(['id', 'disabled_at']).where('account_id', '=', a.accountId).orderBy('id').execute(),
    };
  };

  async function forge(page: Page, path: string, form: Record<string, string>): Promise<number> {
    const res = await page.request.post(`${server.root}${path}`, { form: { ...form, _csrf: await csrfOf(page) }, maxRedirects: 0 });
    return res.status();
  }

  it('a viewer sees every page without change buttons or secrets, and each forged POST is refused with nothing changed', async () => {
    const { context, page } = await signedIn(browser, server.root, a.users.viewer);
    await page.goto(`${base}/keys`);
    expect(await page.locator('tbody tr').count()).to.equal(1);
    expect(await page.getByText('Révoquer').count()).to.equal(0);
    expect(await page.locator('form[action$="/keys"]').count()).to.equal(0);
    expect(await page.locator('.notice').textContent()).to.include('Lecture seule');
    await page.goto(`${base}/webhooks`);
    expect(await page.locator('form[action$="/webhooks"]').count()).to.equal(0);
    await page.goto(`${base}/webhooks/${endpointId}`);
    expect(await page.locator('form[action$="/rotate"], form[action$="/test"], button[value=save], a[href$="/delete"]').count()).to.equal(0);
    await page.goto(`${base}/deliveries/${deliveryId}`);
    expect(await page.locator('form[action$="/replay"]').count()).to.equal(0);
    await page.goto(`${server.root}/dashboard/organizations`);
    expect(await page.locator('form[action$="/archive"], form[action="/dashboard/organizations"]').count()).to.equal(0);
    expect(await page.locator('nav a[href="/dashboard/users"]').count()).to.equal(0);

    const before = await snapshot();
    const forged: [string, Record<string, string>][] = [
      [`/dashboard/o/${a.organizationId}/keys`, { bundle: 'full_access', mode: 'test' }],
      [`/dashboard/o/${a.organizationId}/keys/${keyId}/revoke`, {}],
      [`/dashboard/o/${a.organizationId}/webhooks`, { url: 'http://127.0.0.1:9/x' }],
      [`/dashboard/o/${a.organizationId}/webhooks/${endpointId}`, { action: 'disable' }],
      [`/dashboard/o/${a.organizationId}/webhooks/${endpointId}/rotate`, {}],
      [`/dashboard/o/${a.organizationId}/webhooks/${endpointId}/test`, { event: 'invoice.paid' }],
      [`/dashboard/o/${a.organizationId}/webhooks/${endpointId}/delete`, {}],
      [`/dashboard/o/${a.organizationId}/deliveries/${deliveryId}/replay`, {}],
      [`/dashboard/organizations/${a.organizationId}/archive`, {}],
      ['/dashboard/organizations', { legal_name: 'Forged SARL' }],
      ['/dashboard/users', { email: 'forged@example.ma', role: 'owner', password: 'forged password 123' }],
    ];
    for (const [path, form] of forged) expect(await forge(page, path, form), path).to.equal(403);
    expect(await snapshot()).to.deep.equal(before);
    const rotatePage = await page.request.get(`${base}/webhooks/${endpointId}/delete`);
    expect(rotatePage.status()).to.equal(403);
    await context.close();
  });

  it('an admin manages keys and webhooks but not organizations or users', async () => {
    const { context, page } = await signedIn(browser, server.root, a.users.admin);
    const before = await snapshot();
    expect(await forge(page, `/dashboard/organizations/${a.organizationId}/archive`, {})).to.equal(403);
    expect(await forge(page, '/dashboard/users', { email: 'x@example.ma', role: 'owner', password: 'forged password 123' })).to.equal(403);
    expect((await page.request.get(`${server.root}/dashboard/users`)).status()).to.equal(403);
    expect(await snapshot()).to.deep.equal(before);
    expect(await forge(page, `/dashboard/o/${a.organizationId}/webhooks/${endpointId}`, { action: 'disable' })).to.equal(303);
    expect((await snapshot()).endpoint!.enabled).to.equal(false);
    await forge(page, `/dashboard/o/${a.organizationId}/webhooks/${endpointId}`, { action: 'enable' });
    await context.close();
  });

  it("a user of another account gets the 404 page for account A's organization, key, endpoint and delivery, and changes nothing", async () => {
    const { context, page } = await signedIn(browser, server.root, b.users.owner);
    const urls = [
      `${base}/keys`,
      `${base}/webhooks`,
      `${base}/deliveries`,
      `${base}/invoices`,
      `${base}/keys/${keyId}/revoke`,
      `${base}/webhooks/${endpointId}`,
      `${base}/deliveries/${deliveryId}`,
      // B's own organization, A's ids:
      `${server.root}/dashboard/o/${b.organizationId}/keys/${keyId}/revoke`,
      `${server.root}/dashboard/o/${b.organizationId}/webhooks/${endpointId}`,
      `${server.root}/dashboard/o/${b.organizationId}/deliveries/${deliveryId}`,
      `${server.root}/dashboard/o/not-a-uuid/keys`,
    ];
    for (const url of urls) {
      const res = await page.goto(url);
      expect(res!.status(), url).to.equal(404);
      expect(await page.locator('h1').textContent()).to.equal('Page introuvable');
    }
    const before = await snapshot();
    const own = `/dashboard/o/${b.organizationId}`;
    for (const path of [`${own}/keys/${keyId}/revoke`, `${own}/webhooks/${endpointId}/rotate`, `${own}/deliveries/${deliveryId}/replay`, `/dashboard/organizations/${a.organizationId}/archive`]) {
      expect(await forge(page, path, {}), path).to.equal(404);
    }
    expect(await snapshot()).to.deep.equal(before);
    await context.close();
  });
  // Last in the file: it adds 120 deliveries to account A.
  it('deliveries page by the last row to the microsecond: one transaction\'s deliveries all show, once; an edited cursor shows the first page', async () => {
    const db = server.database.db;
    // One statement, so one created_at to the microsecond for all of them, as one transaction of the subscriber gives.
    const ids = Array.from({ length: 120 }, (_, i) => `01a20000-0000-7000-8000-${String(1000 + i).padStart(12, '0')}`);
    await db
      .insertInto('webhook_deliveries')
      .values(ids.map((id) => ({ id, endpoint_id: endpointId, organization_id: a.organizationId, event_id: id, event_type: 'invoice.sent', body: '{}', status: 'succeeded', attempt_count: 1 })))
      .execute();
    const { context, page } = await signedIn(browser, server.root, a.users.viewer);
    const seen: string[] = [];
    let next: string | null = `${base}/deliveries`;
    for (let pages = 0; next && pages < 10; pages++) {
      expect((await page.goto(next))!.status()).to.equal(200);
      for (const href of await page.locator('tbody a').evaluateAll((links) => links.map((l) => l.getAttribute('href')!))) seen.push(href.split('/').pop()!);
      const older = page.locator('nav.pager a');
      next = (await older.count()) ? new URL((await older.getAttribute('href'))!, `${base}/deliveries`).toString() : null;
    }
    expect(seen.length).to.equal(121);
    expect(new Set(seen).size).to.equal(121);
    expect(seen).to.include.members([...ids, deliveryId]);

    const first = seen.slice(0, 50);
    for (const before of ['1', '0', '-1', '2026-02-31T00:00:00.000000Z', '0000-01-01T00:00:00.000000Z', '2026-11-28T02:41:14.535Z']) {
      const res = await page.goto(`${base}/deliveries?before=${encodeURIComponent(before)}&before_id=${ids[0]}`);
      expect(res!.status(), before).to.equal(200);
      const shown = await page.locator('tbody a').evaluateAll((links) => links.map((l) => l.getAttribute('href')!.split('/').pop()!));
      expect(shown, before).to.deep.equal(first);
    }
    await context.close();
  });
});
