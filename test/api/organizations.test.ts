/** /organizations* end to end: account keys provision, list, read, archive and restore. */
import { expect } from 'chai';
import { call, createKey } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { expectError, newAccount, newOrganization, ORGANIZATION_FIELDS, provision, randomIce, type AccountUnderTest } from './organization-support.ts';

describe('API /organizations', function () {
  let server: TestServer;
  let account: AccountUnderTest;
  const url = (path = '') => `${server.url}/organizations${path}`;

  before(async function () {
    server = await startTestServer({ roles: ['api', 'projector'] });
  });
  after(() => server?.stop());
  beforeEach(async function () {
    account = await newAccount(server);
  });

  describe('POST /organizations', function () {
    it('provisions an organization: 201, the CONTRACT representation, flat address stored as billing_address', async function () {
      const ice = randomIce();
      const res = await provision(server, account, {
        legal_name: 'Atlas Conseil SARL', ice, rc: 'RC 4521', if_number: '40123456', phone: '+212522000000', email: 'compta@atlas.ma',
        address_street: '1 Bd Zerktouni', address_city: 'Casablanca', address_postal_code: '20000',
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const org = res.body.data;
      expect(Object.keys(org)).to.have.members(ORGANIZATION_FIELDS);
      expect(org).to.include({ legal_name: 'Atlas Conseil SARL', ice, rc: 'RC 4521', vat_number: null, website: null, archived: false, archived_at: null });
      expect(org.billing_address).to.deep.equal({ street: '1 Bd Zerktouni', city: 'Casablanca', postal_code: '20000', country: 'MA' });
      expect(Object.keys(org.billing_address)).to.deep.equal(['street', 'city', 'postal_code', 'country']);
      expect(org.subscription).to.deep.equal({ plan: 'professional', status: 'active', current_period_end: null });
      expect(org.api_quotas).to.deep.equal({
        requests_per_minute: 120, api_keys_limit: 10, api_keys_used: 0, recurring_schedules_limit: 50, recurring_schedules_used: 0,
      });
      expect(org.created_at).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(res.headers.get('etag')).to.equal('"0"');

      const read = await call(url(`/${org.id}`), account.accountKey.secret);
      expect(read.status).to.equal(200);
      expect(read.body.data).to.deep.equal(org);
    });

    it('ignores If-Match on a create (a new organization has no version to compare), as customers do, and keeps its ICE and slot', async function () {
      const ice = randomIce();
      const res = await call(url(), account.accountKey.secret, { method: 'POST', body: { legal_name: 'Atlas If-Match SARL', ice }, headers: { 'If-Match': '"3"' } });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data.ice).to.equal(ice);
      const again = await provision(server, account, { ice });
      expectError(again, 400, 'VALIDATION_ERROR');
    });

    it('rejects a bad body with VALIDATION_ERROR naming the fields, never a 500', async function () {
      const cases: [unknown, string[]][] = [
        [{}, ['legal_name']],
        [{ legal_name: 'A', billing_address: { city: 'Rabat' } }, ['billing_address']],
        [{ legal_name: 'A', typo_field: 1 }, ['typo_field']],
        [{ legal_name: 42, ice: ['1'] }, ['legal_name', 'ice']],
        [{ legal_name: 'A', ice: '12345', email: 'x', website: 'atlas', address_country: 'Maroc' }, ['ice', 'email', 'website', 'address_country']],
        // Named as sent (the flat fields), whichever layer refuses them.
        [{ legal_name: 'A', address_city: 'c'.repeat(101), address_postal_code: '1'.repeat(22), address_country: 'XK' }, ['address_city', 'address_postal_code', 'address_country']],
        [{ legal_name: 'A', address_city: 'c'.repeat(101), address_country: 'XK', typo_field: 1 }, ['address_city', 'address_country', 'typo_field']],
        [[1, 2], ['body']],
        [{ legal_name: 'A\u0000B' }, ['legal_name']],
      ];
      for (const [body, fields] of cases) {
        const res = await call(url(), account.accountKey.secret, { method: 'POST', body });
        const error = expectError(res, 400, 'VALIDATION_ERROR');
        expect(error.details.fields.map((f: any) => f.field), JSON.stringify(body)).to.have.members(fields);
      }
      expectError(await call(url(), account.accountKey.secret, { method: 'POST', body: '{"legal_name":' }), 400, 'INVALID_JSON');
    });

    it('a duplicate ICE, even in another account, is VALIDATION_ERROR ice "already used" and takes no entity slot', async function () {
      const ice = randomIce();
      expect((await provision(server, account, { ice })).status).to.equal(201);
      const other = await newAccount(server);
      for (const who of [account, other]) {
        const error = expectError(await provision(server, who, { ice }), 400, 'VALIDATION_ERROR');
        expect(error.details.fields).to.deep.equal([{ field: 'ice', message: 'already used' }]);
      }
      // professional: 3 entities. The failed attempts above gave their slots back.
      for (let i = 0; i < 3; i++) expect((await provision(server, other)).status).to.equal(201);
    });

    it('a duplicate ICE is listed beside the body\'s other problems, whichever layer refuses them', async function () {
      const ice = randomIce();
      expect((await provision(server, account, { ice })).status).to.equal(201);
      const error = expectError(await provision(server, account, { ice, email: 'bad' }), 400, 'VALIDATION_ERROR');
      expect(error.details.fields).to.deep.equal([{ field: 'email', message: 'must be a valid email address' }, { field: 'ice', message: 'already used' }]);
      // Also when the schema refuses the body (an unknown field).
      const both = expectError(await provision(server, account, { ice, email: 'bad', typo_field: 1 }), 400, 'VALIDATION_ERROR');
      expect(both.details.fields.map((f: any) => f.field)).to.have.members(['typo_field', 'email', 'ice']);
    });

    it('an account at its cap is not told of a taken ICE beside a bad e-mail (the cap comes before the ICE)', async function () {
      const ice = randomIce();
      expect((await provision(server, account, { ice })).status).to.equal(201);
      const full = await newAccount(server);
      for (let i = 0; i < 3; i++) expect((await provision(server, full)).status).to.equal(201);
      const error = expectError(await provision(server, full, { ice, email: 'bad' }), 400, 'VALIDATION_ERROR');
      expect(error.details.fields).to.deep.equal([{ field: 'email', message: 'must be a valid email address' }]);
      const withSchema = expectError(await provision(server, full, { ice, email: 'bad', typo_field: 1 }), 400, 'VALIDATION_ERROR');
      expect(withSchema.details.fields.map((f: any) => f.field)).to.have.members(['typo_field', 'email']);
    });

    it('10 concurrent creations with one ICE: exactly one 201', async function () {
      const ice = randomIce();
      const accounts = await Promise.all(Array.from({ length: 10 }, () => newAccount(server)));
      const results = await Promise.all(accounts.map((a) => provision(server, a, { ice })));
      expect(results.filter((r) => r.status === 201)).to.have.length(1);
      for (const r of results.filter((r) => r.status !== 201)) expect(r.body.error.details.fields[0]).to.deep.equal({ field: 'ice', message: 'already used' });
    });

    it('10 concurrent creations with one ICE on one account below its cap: one 201, nine ICE conflicts, no ENTITY_CAP_REACHED', async function () {
      const ice = randomIce();
      const results = await Promise.all(Array.from({ length: 10 }, () => provision(server, account, { ice })));
      expect(results.filter((r) => r.status === 201), JSON.stringify(results.map((r) => r.body))).to.have.length(1);
      for (const r of results.filter((r) => r.status !== 201)) {
        expect(r.status, JSON.stringify(r.body)).to.equal(400);
        expect(r.body.error.details.fields).to.deep.equal([{ field: 'ice', message: 'already used' }]);
      }
      // The refused requests held no slot: the account still has its other two (professional: 3).
      expect((await provision(server, account)).status).to.equal(201);
      expect((await provision(server, account)).status).to.equal(201);
      expectError(await provision(server, account), 403, 'ENTITY_CAP_REACHED');
    });

    it('an account at its cap hears ENTITY_CAP_REACHED, also for an ICE that is already used', async function () {
      const ice = randomIce();
      expect((await provision(server, await newAccount(server), { ice })).status).to.equal(201);
      for (let i = 0; i < 3; i++) expect((await provision(server, account)).status).to.equal(201);
      expectError(await provision(server, account, { ice }), 403, 'ENTITY_CAP_REACHED');
      expectError(await provision(server, account, { ice: randomIce() }), 403, 'ENTITY_CAP_REACHED');
    });

    it('ENTITY_CAP_REACHED beyond the plan (professional 3), archived organizations included, also under concurrency', async function () {
      const first = await provision(server, account);
      const rest = await Promise.all([1, 2, 3, 4].map(() => provision(server, account)));
      expect(rest.map((r) => r.status).sort()).to.deep.equal([201, 201, 403, 403]);
      for (const r of rest.filter((r) => r.status === 403)) expect(r.body.error.code).to.equal('ENTITY_CAP_REACHED');
      await call(url(`/${first.body.data.id}/archive`), account.accountKey.secret, { method: 'POST' });
      expectError(await provision(server, account), 403, 'ENTITY_CAP_REACHED');
    });

    it('fiduciaire shows unlimited keys as null', async function () {
      const res = await provision(server, await newAccount(server, 'fiduciaire'));
      expect(res.body.data.api_quotas).to.include({ requests_per_minute: 300, api_keys_limit: null, recurring_schedules_limit: 500 });
    });
  });

  describe('GET /organizations', function () {
    it("lists the account's organizations newest first, archived ones only with include_archived", async function () {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await provision(server, account, { legal_name: `Entity ${i}` })).body.data.id);
      await newOrganization(server); // another account's: never listed
      await call(url(`/${ids[1]}/archive`), account.accountKey.secret, { method: 'POST' });

      const active = await call(url(), account.accountKey.secret);
      expect(active.status).to.equal(200);
      expect(active.body.data.map((o: any) => o.id)).to.deep.equal([ids[2], ids[0]]);
      expect(active.body.meta.pagination).to.deep.equal({ total: 2, page: 1, perPage: 20, totalPages: 1 });

      const all = await call(url('?include_archived=true&order=asc&per_page=2&page=1'), account.accountKey.secret);
      expect(all.body.data.map((o: any) => o.id)).to.deep.equal([ids[0], ids[1]]);
      expect(all.body.meta.pagination).to.deep.equal({ total: 3, page: 1, perPage: 2, totalPages: 2 });
      expect(all.body.data[1].archived).to.equal(true);
    });

    it('rejects malformed query values', async function () {
      for (const q of ['include_archived=maybe', 'per_page=0', 'page=abc', 'order=up', 'unknown=1', 'page=1000001']) {
        expectError(await call(url(`?${q}`), account.accountKey.secret), 400, 'VALIDATION_ERROR');
      }
    });
  });

  describe('tenant isolation', function () {
    it("404 for another account's organization, an unknown id and a non-UUID, on every /organizations/{id} route", async function () {
      const foreign = await newOrganization(server);
      for (const id of [foreign.organizationId, '0190b4a1-0000-7000-8000-000000000000', 'not-a-uuid']) {
        expectError(await call(url(`/${id}`), account.accountKey.secret), 404, 'NOT_FOUND');
        expectError(await call(url(`/${id}/archive`), account.accountKey.secret, { method: 'POST' }), 404, 'NOT_FOUND');
        expectError(await call(url(`/${id}/restore`), account.accountKey.secret, { method: 'POST' }), 404, 'NOT_FOUND');
      }
      const still = await call(`${server.url}/organization`, foreign.key.secret);
      expect(still.body.data.archived).to.equal(false);
    });

    it('an organization key gets ACCOUNT_KEY_REQUIRED here, and 404 when it names another organization', async function () {
      const a = await newOrganization(server);
      const b = await newOrganization(server);
      expectError(await call(url(`/${b.organizationId}`), a.key.secret), 403, 'ACCOUNT_KEY_REQUIRED');
      const res = await call(`${server.url}/organization`, a.key.secret, { headers: { 'x-organization-id': b.organizationId } });
      expectError(res, 404, 'NOT_FOUND');
    });

    it('scopes are exact: organizations:read cannot create or archive', async function () {
      const reader = await createKey(server.database.db, { accountId: account.accountId, scopes: ['organizations:read'] });
      const error = expectError(await call(url(), reader.secret, { method: 'POST', body: { legal_name: 'X' } }), 403, 'FORBIDDEN');
      expect(error.details.required_scopes).to.deep.equal(['organizations:write']);
    });
  });

  describe('archive and restore', function () {
    it('archive freezes the organization everywhere; restore resumes it at once', async function () {
      const org = await newOrganization(server);
      const archive = await call(url(`/${org.organizationId}/archive`), org.accountKey.secret, { method: 'POST' });
      expect(archive.status, JSON.stringify(archive.body)).to.equal(200);
      expect(archive.body.data).to.include({ archived: true });
      expect(archive.body.data.archived_at).to.be.a('string');
      expect(archive.headers.get('etag')).to.equal('"1"');

      expectError(await call(url(`/${org.organizationId}/archive`), org.accountKey.secret, { method: 'POST' }), 409, 'ALREADY_ARCHIVED');
      const frozen = expectError(await call(`${server.url}/organization`, org.key.secret), 403, 'FORBIDDEN');
      expect(frozen.details).to.deep.equal({ reason: 'organization_archived' });
      const viaAccount = await call(`${server.url}/organization`, org.accountKey.secret, { headers: { 'x-organization-id': org.organizationId } });
      expect(expectError(viaAccount, 403, 'FORBIDDEN').details.reason).to.equal('organization_archived');
      expect((await call(url(`/${org.organizationId}`), org.accountKey.secret)).body.data.archived).to.equal(true);

      const restore = await call(url(`/${org.organizationId}/restore`), org.accountKey.secret, { method: 'POST' });
      expect(restore.status).to.equal(200);
      expect(restore.body.data).to.include({ archived: false, archived_at: null });
      expect((await call(`${server.url}/organization`, org.key.secret)).status).to.equal(200);
      expectError(await call(url(`/${org.organizationId}/restore`), org.accountKey.secret, { method: 'POST' }), 409, 'NOT_ARCHIVED');
    });

    it('If-Match on archive: a stale version is VERSION_CONFLICT', async function () {
      const org = await newOrganization(server);
      const res = await call(url(`/${org.organizationId}/archive`), org.accountKey.secret, { method: 'POST', headers: { 'if-match': '"5"' } });
      expectError(res, 409, 'VERSION_CONFLICT');
      const ok = await call(url(`/${org.organizationId}/archive`), org.accountKey.secret, { method: 'POST', headers: { 'if-match': '"0"' } });
      expect(ok.status).to.equal(200);
    });
  });
});
