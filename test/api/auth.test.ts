/** Authentication and the access checks of CONTRACT section 8, in order, over real HTTP. */
import { connect } from 'node:net';
import { expect } from 'chai';
import { revokeKey } from '../../src/accounts/keys.ts';
import { updateAccount } from '../../src/accounts/accounts.ts';
import { call, createAccount, createKey, createTenant, insertOrganizationRow, type Tenant } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { withTestRoutes } from '../support/test-routes.ts';

describe('API pipeline: authentication and access', () => {
  let server: TestServer;
  let tenant: Tenant;
  const echo = () => `${server.url}/_test/echo`;

  before(async () => {
    server = await startTestServer({ roles: ['api'], routes: withTestRoutes });
    tenant = await createTenant(server.database.db);
  });
  after(() => server?.stop());

  function expectError(res: { status: number; body: any }, status: number, code: string) {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body.success).to.equal(false);
    expect(res.body.error.code).to.equal(code);
  }

  describe('401 UNAUTHORIZED', () => {
    const cases: [string, Record<string, string>][] = [
      ['missing', {}],
      ['not Bearer', { authorization: 'Basic abc' }],
      ['malformed', { authorization: 'Bearer svc_test_short' }],
      ['unknown', { authorization: `Bearer svc_test_${'a'.repeat(43)}` }],
    ];
    for (const [name, headers] of cases) {
      it(`${name} key`, async () => {
        const res = await call(echo(), null, { headers });
        expectError(res, 401, 'UNAUTHORIZED');
        expect(res.body.error.message).to.match(/invalid or missing API key/i);
        expect(res.headers.get('www-authenticate')).to.equal('Bearer');
        expect(res.headers.get('x-ratelimit-limit')).to.equal(null);
      });
    }

    it('two Authorization headers: 401, whichever keys they hold (Node would keep the first)', async () => {
      // Written on a socket by hand: Node's and fetch's clients merge or refuse repeated headers.
      const twice = (first: string, second: string) =>
        new Promise<{ status: number; body: any }>((resolve, reject) => {
          const url = new URL(echo());
          const socket = connect(Number(url.port), url.hostname, () =>
            socket.write(`GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${first}\r\nauthorization: Bearer ${second}\r\nConnection: close\r\n\r\n`),
          );
          let text = '';
          socket.on('data', (c) => (text += c));
          socket.on('error', reject);
          socket.on('end', () => resolve({ status: Number(text.split(' ')[1]), body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) }));
        });
      const other = await createTenant(server.database.db);
      for (const [a, b] of [[tenant.key.secret, other.key.secret], [tenant.key.secret, tenant.key.secret]]) {
        const res = await twice(a, b);
        expectError(res, 401, 'UNAUTHORIZED');
        expect(res.body.error.message).to.include('send one Authorization header');
      }
      expect((await call(echo(), tenant.key.secret)).status).to.equal(200);
    });

    it('revoked key fails on the next request', async () => {
      const t = await createTenant(server.database.db);
      expect((await call(echo(), t.key.secret)).status).to.equal(200);
      await revokeKey(server.database.db, t.key.id);
      expectError(await call(echo(), t.key.secret), 401, 'UNAUTHORIZED');
    });

    it('live key on a test-mode server', async () => {
      const t = await createTenant(server.database.db, { mode: 'live' });
      expectError(await call(echo(), t.key.secret), 401, 'UNAUTHORIZED');
    });

    it('test key on a live-mode server, and a live key accepted there', async () => {
      const live = await startTestServer({ roles: ['api'], database: server.database, env: { SERVICE_MODE: 'live' }, routes: withTestRoutes });
      try {
        const t = await createTenant(server.database.db, { mode: 'live' });
        expectError(await call(`${live.url}/_test/echo`, tenant.key.secret), 401, 'UNAUTHORIZED');
        expect((await call(`${live.url}/_test/echo`, t.key.secret)).status).to.equal(200);
      } finally {
        await live.stop();
      }
    });
  });

  describe('key kind', () => {
    it('ACCOUNT_KEY_REQUIRED for an organization key on an account route', async () => {
      expectError(await call(`${server.url}/_test/account`, tenant.key.secret), 403, 'ACCOUNT_KEY_REQUIRED');
    });

    it('account key: ORG_HEADER_REQUIRED, 404 for foreign/unknown/non-UUID ids, accepted with its own', async () => {
      const acct = await createKey(server.database.db, { accountId: tenant.accountId, bundle: 'full_access' });
      const res = await call(echo(), acct.secret);
      expectError(res, 400, 'ORG_HEADER_REQUIRED');
      expect(res.headers.get('x-ratelimit-limit')).to.equal('120');
      const other = await createTenant(server.database.db);
      for (const id of [other.organizationId, '0190b4a1-0000-7000-8000-000000000000', 'not-a-uuid']) {
        expectError(await call(echo(), acct.secret, { headers: { 'x-organization-id': id } }), 404, 'NOT_FOUND');
      }
      const ok = await call(echo(), acct.secret, { headers: { 'x-organization-id': tenant.organizationId } });
      expect(ok.status).to.equal(200);
      expect(ok.body.data.organization_id).to.equal(tenant.organizationId);
      const account = await call(`${server.url}/_test/account`, acct.secret);
      expect(account.status).to.equal(200);
      expect(account.body.data).to.deep.equal({ account_id: tenant.accountId, organization_id: null });
    });

    it('an organization key naming another organization gets 404', async () => {
      const other = await createTenant(server.database.db);
      expectError(await call(echo(), tenant.key.secret, { headers: { 'x-organization-id': other.organizationId } }), 404, 'NOT_FOUND');
      const own = await call(echo(), tenant.key.secret, { headers: { 'x-organization-id': tenant.organizationId } });
      expect(own.status).to.equal(200);
    });
  });

  describe('plan, subscription, organization state', () => {
    it('API_TIER_NOT_SUPPORTED on the starter plan', async () => {
      const t = await createTenant(server.database.db);
      await updateAccount(server.database.db, t.accountId, { plan: 'starter' });
      expectError(await call(echo(), t.key.secret), 403, 'API_TIER_NOT_SUPPORTED');
    });

    it('SUBSCRIPTION_EXPIRED when marked expired or past its period end', async () => {
      const t = await createTenant(server.database.db, { account: { subscription: 'expired' } });
      expectError(await call(echo(), t.key.secret), 403, 'SUBSCRIPTION_EXPIRED');
      const u = await createTenant(server.database.db, { account: { currentPeriodEnd: '2020-01-31' } });
      expectError(await call(echo(), u.key.secret), 403, 'SUBSCRIPTION_EXPIRED');
    });

    it('API_DISABLED when the organization switched its API off', async () => {
      const t = await createTenant(server.database.db, { organization: { apiEnabled: false } });
      expectError(await call(echo(), t.key.secret), 403, 'API_DISABLED');
    });

    it('FORBIDDEN organization_archived, also through an account key', async () => {
      const t = await createTenant(server.database.db, { organization: { archived: true } });
      const res = await call(echo(), t.key.secret);
      expectError(res, 403, 'FORBIDDEN');
      expect(res.body.error.details).to.deep.equal({ reason: 'organization_archived' });
      const acct = await createKey(server.database.db, { accountId: t.accountId, bundle: 'full_access' });
      const viaAccount = await call(echo(), acct.secret, { headers: { 'x-organization-id': t.organizationId } });
      expect(viaAccount.body.error.details).to.deep.equal({ reason: 'organization_archived' });
      // The account routes still work (restore needs them).
      expect((await call(`${server.url}/_test/account`, acct.secret)).status).to.equal(200);
    });

    it('FORBIDDEN with required_scopes when the key lacks the scope', async () => {
      const t = await createTenant(server.database.db, { scopes: ['invoices:read'] });
      const res = await call(echo(), t.key.secret);
      expectError(res, 403, 'FORBIDDEN');
      expect(res.body.error.details).to.deep.equal({ required_scopes: ['organization:read'] });
      expect(res.headers.get('x-ratelimit-remaining')).to.match(/^\d+$/);
    });

    it('checks in contract order: key kind before plan, plan before scope', async () => {
      const accountId = await createAccount(server.database.db, 'professional', { subscription: 'expired' });
      const orgId = await insertOrganizationRow(server.database.db, accountId, { archived: true });
      const key = await createKey(server.database.db, { accountId, organizationId: orgId, scopes: ['invoices:read'] });
      expectError(await call(`${server.url}/_test/account`, key.secret), 403, 'ACCOUNT_KEY_REQUIRED');
      expectError(await call(echo(), key.secret), 403, 'SUBSCRIPTION_EXPIRED');
    });
  });
});
