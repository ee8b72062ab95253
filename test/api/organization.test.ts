/** GET/PATCH /organization end to end: the profile of the organization a key acts on. */
import { expect } from 'chai';
import { changeOrganizationApiAccess } from '../../src/commands/organization/handler.ts';
import { call } from '../support/fixtures.ts';
import { metadata } from '../eventstore/contract.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { expectError, newOrganization, ORGANIZATION_FIELDS, provision, randomIce, type OrganizationUnderTest } from './organization-support.ts';

describe('API /organization', function () {
  let server: TestServer;
  let org: OrganizationUnderTest;
  const url = () => `${server.url}/organization`;
  const patch = (body: unknown, headers: Record<string, string> = {}, secret = org.key.secret) =>
    call(url(), secret, { method: 'PATCH', body, headers });

  before(async function () {
    server = await startTestServer({ roles: ['api', 'projector'] });
  });
  after(() => server?.stop());
  beforeEach(async function () {
    org = await newOrganization(server, { body: { ice: randomIce() } });
  });

  it('GET answers the representation with its version as ETag, and counts the active keys', async function () {
    const res = await call(url(), org.key.secret);
    expect(res.status).to.equal(200);
    expect(Object.keys(res.body.data)).to.have.members(ORGANIZATION_FIELDS);
    expect(res.body.data.id).to.equal(org.organizationId);
    expect(res.body.data.api_quotas.api_keys_used).to.equal(1);
    expect(res.headers.get('etag')).to.equal('"0"');
  });

  it('PATCH changes only the fields sent; the next GET shows it (read your writes)', async function () {
    const res = await patch({
      legal_name: 'Atlas Group SA', vat_number: 'MA123', website: 'https://atlas.ma', email: null,
      billing_address: { street: '5 Rue Ibn Batouta', city: 'Rabat' },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.headers.get('etag')).to.equal('"1"');
    expect(res.body.data).to.include({ legal_name: 'Atlas Group SA', vat_number: 'MA123', website: 'https://atlas.ma', email: null });
    expect(res.body.data.billing_address).to.deep.equal({ street: '5 Rue Ibn Batouta', city: 'Rabat', postal_code: null, country: 'MA' });
    const read = await call(url(), org.key.secret);
    expect(read.body.data).to.deep.equal(res.body.data);
    expect(read.headers.get('etag')).to.equal('"1"');
  });

  it('a PATCH that changes nothing keeps the version', async function () {
    const res = await patch({});
    expect(res.status).to.equal(200);
    expect(res.headers.get('etag')).to.equal('"0"');
  });

  it('rejects unknown fields and bad values with VALIDATION_ERROR, never a 500', async function () {
    const cases: [unknown, string[]][] = [
      [{ legal_nam: 'typo' }, ['legal_nam']],
      [{ subscription: { plan: 'fiduciaire' } }, ['subscription']],
      [{ billing_address: { town: 'Rabat' } }, ['billing_address.town']],
      [{ legal_name: null }, ['legal_name']],
      [{ legal_name: '   ', ice: '1234567890123456', email: 'no', website: 'javascript:alert(1)' }, ['legal_name', 'ice', 'email', 'website']],
      [{ phone: 5, billing_address: 'Rabat' }, ['phone', 'billing_address']],
      [{ billing_address: { country: 'XX' } }, ['billing_address.country']],
      [{ legal_name: 'Atlas\u0000', billing_address: { city: '\ud800' } }, ['legal_name', 'billing_address.city']],
    ];
    for (const [body, fields] of cases) {
      const error = expectError(await patch(body), 400, 'VALIDATION_ERROR');
      expect(error.details.fields.map((f: any) => f.field), JSON.stringify(body)).to.have.members(fields);
    }
    expectError(await call(url(), org.key.secret, { method: 'PATCH', body: 'nope', headers: { 'content-type': 'text/plain' } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('If-Match: the current version passes, a stale one is VERSION_CONFLICT', async function () {
    expectError(await patch({ phone: '1' }, { 'if-match': '"3"' }), 409, 'VERSION_CONFLICT');
    expect((await patch({ phone: '1' }, { 'if-match': '"0"' })).status).to.equal(200);
    expectError(await patch({ phone: '2' }, { 'if-match': '"0"' }), 409, 'VERSION_CONFLICT');
    expect((await call(url(), org.key.secret)).body.data.phone).to.equal('1');
  });

  it('an ICE used by another organization (another account) is "already used"; an ICE once named is never reused by another', async function () {
    const other = await newOrganization(server, { body: { ice: randomIce() } });
    const mine = (await call(url(), org.key.secret)).body.data.ice;
    const theirs = (await call(url(), other.key.secret)).body.data.ice;

    const error = expectError(await patch({ ice: theirs }), 400, 'VALIDATION_ERROR');
    expect(error.details.fields).to.deep.equal([{ field: 'ice', message: 'already used' }]);

    // Beside the body's other problems, whichever layer refuses them; its own ICE is no duplicate.
    for (const [extra, field] of [[{ email: 'bad' }, 'email'], [{ colour: 'red' }, 'colour']] as const) {
      const both = expectError(await patch({ ice: theirs, ...extra }), 400, 'VALIDATION_ERROR');
      expect(both.details.fields.map((f: any) => f.field)).to.have.members([field, 'ice']);
      expect(expectError(await patch({ ice: mine, ...extra }), 400, 'VALIDATION_ERROR').details.fields.map((f: any) => f.field)).to.deep.equal([field]);
    }

    const fresh = randomIce();
    expect((await patch({ ice: fresh })).body.data.ice).to.equal(fresh);
    // "The ICE identifies exactly one legal entity on the whole platform and cannot be reused, even by another
    // account": the old value stays this organization's, whether another organization asks for it or a new one.
    expect(expectError(await patch({ ice: mine }, {}, other.key.secret), 400, 'VALIDATION_ERROR').details.fields).to.deep.equal([{ field: 'ice', message: 'already used' }]);
    expectError(await provision(server, other, { ice: mine }), 400, 'VALIDATION_ERROR');
    expectError(await provision(server, other, { ice: fresh }), 400, 'VALIDATION_ERROR');
    // Its own former ICE it may name again.
    expect((await patch({ ice: mine })).body.data.ice).to.equal(mine);
    expect((await patch({ ice: fresh })).body.data.ice).to.equal(fresh);
  });

  it('clearing the ICE keeps it reserved; setting the same ICE again is a no-op', async function () {
    const mine = (await call(url(), org.key.secret)).body.data.ice;
    expect((await patch({ ice: mine })).headers.get('etag')).to.equal('"0"');
    expect((await patch({ ice: null })).body.data.ice).to.equal(null);
    const other = await newOrganization(server, { body: { ice: randomIce() } });
    expectError(await provision(server, other, { ice: mine }), 400, 'VALIDATION_ERROR');
    expect((await patch({ ice: mine })).body.data.ice).to.equal(mine);
  });

  it('an account key acts on its organization through X-Organization-Id', async function () {
    const headers = { 'x-organization-id': org.organizationId };
    const res = await patch({ phone: '+212600000000' }, headers, org.accountKey.secret);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect((await call(url(), org.accountKey.secret, { headers })).body.data.phone).to.equal('+212600000000');
  });

  it('API access switched off answers API_DISABLED, switched on again works', async function () {
    const write = { store: server.server.runtime.store, metadata: metadata({ actor: 'system' }) };
    const off = await changeOrganizationApiAccess(write, org.organizationId, false);
    await server.server.runtime.progress.waitFor(off.position!);
    expectError(await call(url(), org.key.secret), 403, 'API_DISABLED');
    const on = await changeOrganizationApiAccess(write, org.organizationId, true);
    await server.server.runtime.progress.waitFor(on.position!);
    expect((await call(url(), org.key.secret)).status).to.equal(200);
  });

  it('scopes are exact: organization:read cannot PATCH', async function () {
    const reader = await newOrganization(server, { scopes: ['organization:read'] });
    const error = expectError(await patch({ phone: '1' }, {}, reader.key.secret), 403, 'FORBIDDEN');
    expect(error.details.required_scopes).to.deep.equal(['organization:write']);
  });
});
