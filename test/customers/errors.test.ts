/** Customers over real HTTP: every error the endpoints answer, and none of them a 500. */
import { expect } from 'chai';
import { v7 as uuidv7 } from 'uuid';
import { call } from '../support/fixtures.ts';
import type { TestServer } from '../support/server.ts';
import { customersClient, fieldsOf, newIce, withCustomersApi, type CustomersClient } from './support.ts';

describe('customers API: errors', () => {
  let server: TestServer;
  let api: CustomersClient;
  withCustomersApi((f) => ({ server, api } = f));

  it('rejects bad bodies with field details (schema and domain rules)', async () => {
    expect(fieldsOf(await api.create({}))).to.deep.equal({ name: 'is required', type: 'is required' });
    expect(
      fieldsOf(await api.create({ name: 'A', type: 'b2x', ice: '12345', colour: 'red', address: { town: 'Fès' }, tags: ['', 3] })),
    ).to.deep.equal({
      type: 'must be one of: b2b, b2c',
      ice: 'has an invalid format',
      colour: 'is not allowed',
      'address.town': 'is not allowed',
      'tags[0]': 'must not be empty',
      'tags[1]': 'must be a string',
    });
    expect(fieldsOf(await api.create({ name: '   ', type: 'b2c', email: 'nope', address: { country: 'ma' } }))).to.deep.equal({
      name: 'must not be empty',
      email: 'must be a valid email address',
      'address.country': 'must be an ISO 3166-1 alpha-2 code such as MA',
    });
    // The shape of a code is not enough: only assigned ISO 3166-1 codes (every address can go into a UBL invoice).
    for (const country of ['XX', 'ZZ', 'XK', 'EU', 'UK']) {
      expect(fieldsOf(await api.create({ name: 'A', type: 'b2c', address: { country } })), country).to.deep.equal({ 'address.country': 'must be an ISO 3166-1 alpha-2 code such as MA' });
    }
    for (const country of ['MA', 'FR', 'GB', 'SS', 'CW', 'XI']) expect((await api.create({ name: 'A', type: 'b2c', address: { country } })).status, country).to.equal(201);
    expect(fieldsOf(await api.create({ name: 'x'.repeat(201), type: 'b2c' }))).to.deep.equal({ name: 'must be at most 200 characters long' });
    const notJson = await call(`${server.url}/customers`, api.tenant.key.secret, { method: 'POST', body: '{"name":', headers: { 'content-type': 'application/json' } });
    expect(notJson.body.error.code).to.equal('INVALID_JSON');
  });

  it('refuses text PostgreSQL cannot store (NUL, unpaired surrogates) instead of failing with a 500', async () => {
    const bad = 'must not contain control characters (other than tab and line breaks) or invalid Unicode';
    expect(fieldsOf(await api.create({ name: 'a\u0000b', type: 'b2c', tags: ['ok', '\ud800'], address: { city: 'x\udc00' } }))).to.deep.equal({
      name: bad,
      'tags[1]': bad,
      'address.city': bad,
    });
    const c = await api.make({ name: 'Emoji 😀 ok', type: 'b2c' });
    expect(fieldsOf(await api.patch(c.id, { notes: '\u0000' }))).to.deep.equal({ notes: bad });
    expect(fieldsOf(await api.list('search=%00'))).to.deep.equal({ search: bad });
    expect((await api.list(`search=${encodeURIComponent('😀')}`)).body.data.map((x: any) => x.id)).to.deep.equal([c.id]);
  });

  it('rejects create-only fields and bad values on PATCH', async () => {
    const c = await api.make({ name: 'Atlas', type: 'b2b' });
    expect(fieldsOf(await api.patch(c.id, { legal_name: 'X', rc: '1' }))).to.deep.equal({ legal_name: 'is not allowed', rc: 'is not allowed' });
    expect(fieldsOf(await api.patch(c.id, { status: 'deleted', name: null }))).to.deep.equal({
      status: 'must be one of: active, inactive, archived',
      name: 'must be a string',
    });
    expect((await api.get(c.id)).body.data.version).to.equal(0);
  });

  it('refuses a duplicate ICE within the organization and allows it in another one', async () => {
    const ice = newIce();
    await api.make({ name: 'First', type: 'b2b', ice });
    const dup = await api.create({ name: 'Second', type: 'b2b', ice });
    expect(dup.status).to.equal(400);
    expect(dup.body.error.details.fields).to.deep.equal([{ field: 'ice', message: 'already used' }]);
    const other = await customersClient(server);
    expect((await other.create({ name: 'Elsewhere', type: 'b2b', ice })).status).to.equal(201);
    expect((await api.list()).body.meta.pagination.total).to.equal(1);
  });

  it('lists a duplicate ICE beside the body\'s other problems, on create and on PATCH, whichever layer refuses them', async () => {
    const ice = newIce();
    const holder = await api.make({ name: 'Holder', type: 'b2b', ice });
    // The domain rules refuse the e-mail (the schema passes it); the schema refuses the unknown field.
    expect(fieldsOf(await api.create({ name: 'Second', type: 'b2b', ice, email: 'bad' }))).to.deep.equal({ email: 'must be a valid email address', ice: 'already used' });
    expect(fieldsOf(await api.create({ name: 'Second', type: 'b2b', ice, colour: 'red' }))).to.deep.equal({ colour: 'is not allowed', ice: 'already used' });
    const other = await api.make({ name: 'Other', type: 'b2b' });
    expect(fieldsOf(await api.patch(other.id, { ice, email: 'bad' }))).to.deep.equal({ email: 'must be a valid email address', ice: 'already used' });
    expect(fieldsOf(await api.patch(other.id, { ice, colour: 'red' }))).to.deep.equal({ colour: 'is not allowed', ice: 'already used' });
    // Its own ICE is not a duplicate; a refused body claims nothing.
    expect(fieldsOf(await api.patch(holder.id, { ice, email: 'bad' }))).to.deep.equal({ email: 'must be a valid email address' });
    expect(fieldsOf(await api.patch(holder.id, { ice, colour: 'red' }))).to.deep.equal({ colour: 'is not allowed' });
    const fresh = newIce();
    expect(fieldsOf(await api.create({ name: 'Third', type: 'b2b', ice: fresh, email: 'bad' }))).to.deep.equal({ email: 'must be a valid email address' });
    expect((await api.create({ name: 'Third', type: 'b2b', ice: fresh })).status).to.equal(201);
  });

  it('an upper-case id works on PATCH and DELETE as on GET', async () => {
    const c = await api.make({ name: 'Upper', type: 'b2c' });
    const id = c.id.toUpperCase();
    expect((await call(`${server.url}/customers/${id}`, api.tenant.key.secret)).status).to.equal(200);
    expect((await api.patch(id, { notes: 'x' })).status).to.equal(200);
    expect((await call(`${server.url}/customers/${id}`, api.tenant.key.secret, { method: 'DELETE' })).status).to.equal(200);
  });

  it('lets exactly one of concurrent creates take an ICE', async () => {
    const ice = newIce();
    const replies = await Promise.all([1, 2, 3, 4, 5].map((n) => api.create({ name: `Racer ${n}`, type: 'b2b', ice })));
    expect(replies.map((r) => r.status).sort()).to.deep.equal([201, 400, 400, 400, 400]);
    expect((await api.list()).body.meta.pagination.total).to.equal(1);
  });

  it('moves the ICE reservation on update: the old value is free, the new one taken', async () => {
    const [x, y] = [newIce(), newIce()];
    const a = await api.make({ name: 'A', type: 'b2b', ice: x });
    const b = await api.make({ name: 'B', type: 'b2b' });
    expect((await api.patch(a.id, { ice: y })).body.data.ice).to.equal(y);
    const taken = await api.patch(b.id, { ice: y });
    expect(taken.body.error.details.fields).to.deep.equal([{ field: 'ice', message: 'already used' }]);
    expect((await api.get(b.id)).body.data).to.deep.include({ ice: null, version: 0 });
    expect((await api.patch(b.id, { ice: x })).body.data.ice).to.equal(x);
    expect((await api.patch(a.id, { ice: null })).body.data.ice).to.equal(null);
    expect((await api.create({ name: 'C', type: 'b2b', ice: y })).status).to.equal(201);
  });

  it('frees the ICE of a create the decider refuses (no claim left behind)', async () => {
    const ice = newIce();
    expect((await api.create({ name: 'Bad', type: 'b2b', ice, email: 'not-an-email' })).status).to.equal(400);
    expect((await api.create({ name: 'Good', type: 'b2b', ice })).status).to.equal(201);
  });

  it('answers 404 for another organization’s, unknown or malformed ids', async () => {
    const mine = await api.make({ name: 'Mine', type: 'b2c' });
    const other = await customersClient(server);
    for (const reply of [
      await other.get(mine.id),
      await other.patch(mine.id, { name: 'Stolen' }),
      await other.remove(mine.id),
      await api.get(uuidv7()),
      await api.patch(uuidv7(), { name: 'Ghost' }),
      await api.remove(uuidv7()),
      await api.get('not-a-uuid'),
      await api.get("1' or '1'='1"),
    ]) {
      expect(reply.status).to.equal(404);
      expect(reply.body.error.code).to.equal('NOT_FOUND');
    }
    expect((await api.get(mine.id)).body.data).to.deep.include({ name: 'Mine', version: 0 });
  });

  it('answers VERSION_CONFLICT for a stale If-Match, and accepts the current one', async () => {
    const c = await api.make({ name: 'Versioned', type: 'b2c' });
    await api.patch(c.id, { name: 'V1' }, { 'if-match': '"0"' });
    const stale = await api.patch(c.id, { name: 'V2' }, { 'if-match': '"0"' });
    expect(stale.status).to.equal(409);
    expect(stale.body.error.code).to.equal('VERSION_CONFLICT');
    expect((await api.remove(c.id, { 'if-match': '"0"' })).body.error.code).to.equal('VERSION_CONFLICT');
    expect(fieldsOf(await api.patch(c.id, { name: 'V2' }, { 'if-match': 'yesterday' }))).to.have.property('If-Match');
    const ok = await api.remove(c.id, { 'if-match': '"1"' });
    expect(ok.body.data).to.deep.include({ status: 'archived', version: 2 });
  });

  it('replays POST /customers with the same Idempotency-Key and refuses another body', async () => {
    const headers = { 'idempotency-key': `cust-${uuidv7()}` };
    const first = await api.create({ name: 'Once', type: 'b2c' }, headers);
    const second = await api.create({ name: 'Once', type: 'b2c' }, headers);
    expect(first.status).to.equal(201);
    expect(second.status).to.equal(201);
    expect(second.body).to.deep.equal(first.body);
    expect(second.headers.get('idempotent-replayed')).to.equal('true');
    expect((await api.list()).body.meta.pagination.total).to.equal(1);
    const reused = await api.create({ name: 'Twice', type: 'b2c' }, headers);
    expect(reused.status).to.equal(409);
    expect(reused.body.error.code).to.equal('IDEMPOTENCY_KEY_REUSED');
  });

  it('requires the scope of each endpoint', async () => {
    const reader = await customersClient(server, { bundle: 'read_only' });
    const denied = await reader.create({ name: 'No', type: 'b2c' });
    expect(denied.status).to.equal(403);
    expect(denied.body.error.details.required_scopes).to.deep.equal(['customers:write']);
    const writer = await customersClient(server, { bundle: 'invoicing' }); // no customers:delete
    const c = await writer.make({ name: 'Kept', type: 'b2c' });
    expect((await writer.remove(c.id)).body.error.details.required_scopes).to.deep.equal(['customers:delete']);
  });
});
