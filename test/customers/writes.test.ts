/** Customers over real HTTP: create, read, update, archive, unarchive, events. */
import { expect } from 'chai';
import { customerStream } from '../../src/commands/customer/events.ts';
import type { TestServer } from '../support/server.ts';
import { newIce, withCustomersApi, type CustomersClient } from './support.ts';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('customers API: writes and reads', () => {
  let server: TestServer;
  let api: CustomersClient;
  withCustomersApi((f) => ({ server, api } = f));

  it('a PATCH resending the stored address (keys in any order) changes nothing: same version, no event', async () => {
    const address = { street: '1 Rue Tiznit', city: 'Casablanca', postal_code: '20000', country: 'MA' };
    const c = (await api.create({ name: 'Atlas', type: 'b2c', address })).body.data;
    const again = await api.patch(c.id, { address: { country: 'MA', postal_code: '20000', city: 'Casablanca', street: '1 Rue Tiznit' }, name: 'Atlas' });
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    expect(again.body.data.version).to.equal(0);
    expect(await server.server.runtime.store.readStream(customerStream(c.id))).to.have.length(1);
  });

  it('creates a customer (201, full representation, ETag) and reads it back', async () => {
    const ice = newIce();
    const res = await api.create({
      name: '  École Atlas  ',
      type: 'b2b',
      ice,
      legal_name: 'École Atlas SARL',
      rc: 'RC 12345',
      email: 'contact@ecole-atlas.ma',
      phone: '+212 522 000 000',
      address: { street: '1 Rue Tiznit', city: 'Casablanca', postal_code: '20000' },
      notes: 'Pays à 30 jours',
      tags: ['vip', 'education', 'vip'],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const c = res.body.data;
    expect(c).to.deep.include({
      name: 'École Atlas',
      type: 'b2b',
      ice,
      legal_name: 'École Atlas SARL',
      rc: 'RC 12345',
      email: 'contact@ecole-atlas.ma',
      phone: '+212 522 000 000',
      address: { street: '1 Rue Tiznit', city: 'Casablanca', postal_code: '20000', country: 'MA' },
      notes: 'Pays à 30 jours',
      tags: ['vip', 'education'],
      status: 'active',
      archived_at: null,
      version: 0,
    });
    expect(c.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/); // UUID v7
    expect(c.created_at).to.match(ISO_MS);
    expect(c.updated_at).to.equal(c.created_at);
    expect(Object.keys(c)).to.have.members([
      'id', 'name', 'type', 'ice', 'legal_name', 'rc', 'email', 'phone', 'address', 'notes', 'tags',
      'status', 'archived_at', 'created_at', 'updated_at', 'version',
    ]);
    expect(res.headers.get('etag')).to.equal('"0"');

    const read = await api.get(c.id);
    expect(read.status).to.equal(200);
    expect(read.body.data).to.deep.equal(c);
    expect(read.headers.get('etag')).to.equal('"0"');
  });

  it('creates a minimal b2c and a b2b without ICE (drafts are allowed)', async () => {
    const b2c = await api.make({ name: 'Karim', type: 'b2c' });
    expect(b2c).to.deep.include({ ice: null, email: null, tags: [], notes: null });
    expect(b2c.address).to.deep.equal({ street: null, city: null, postal_code: null, country: 'MA' });
    const b2b = await api.make({ name: 'Sans ICE SARL', type: 'b2b' });
    expect(b2b.ice).to.equal(null);
  });

  it('updates only the fields sent, bumps the version, and a no-op keeps it', async () => {
    const c = await api.make({ name: 'Atlas', type: 'b2b', email: 'a@atlas.ma', tags: ['x'] });
    const res = await api.patch(c.id, { name: 'Atlas Group', phone: '0600000000', address: { city: 'Rabat' } }, { 'if-match': '"0"' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data).to.deep.include({ name: 'Atlas Group', phone: '0600000000', email: 'a@atlas.ma', version: 1 });
    expect(res.body.data.tags).to.deep.equal(['x']);
    expect(res.body.data.address).to.deep.equal({ street: null, city: 'Rabat', postal_code: null, country: 'MA' });
    expect(res.body.data.updated_at >= c.updated_at).to.equal(true);
    expect(res.headers.get('etag')).to.equal('"1"');

    const cleared = await api.patch(c.id, { email: null, tags: [] });
    expect(cleared.body.data).to.deep.include({ email: null, tags: [], version: 2 });

    const same = await api.patch(c.id, { name: 'Atlas Group' });
    expect(same.status).to.equal(200);
    expect(same.body.data.version).to.equal(2);
    expect((await api.get(c.id)).body.data).to.deep.equal(same.body.data);
  });

  it('archives with DELETE (200 with the archived customer), stays readable, unarchives with PATCH', async () => {
    const c = await api.make({ name: 'Souk', type: 'b2c' });
    const del = await api.remove(c.id);
    expect(del.status, JSON.stringify(del.body)).to.equal(200);
    expect(del.body.data).to.deep.include({ id: c.id, status: 'archived', version: 1 });
    expect(del.body.data.archived_at).to.match(ISO_MS);
    expect((await api.get(c.id)).body.data.status).to.equal('archived');

    const again = await api.remove(c.id);
    expect(again.status).to.equal(409);
    expect(again.body.error.code).to.equal('ALREADY_ARCHIVED');

    const back = await api.patch(c.id, { status: 'active' });
    expect(back.body.data).to.deep.include({ status: 'active', archived_at: null, version: 2 });
    const inactive = await api.patch(c.id, { status: 'inactive' });
    expect(inactive.body.data.status).to.equal('inactive');
    const viaPatch = await api.patch(c.id, { status: 'archived' });
    expect(viaPatch.body.data.archived_at).to.match(ISO_MS);
    expect((await api.remove(c.id)).body.error.code).to.equal('ALREADY_ARCHIVED');
  });

  it('keeps an archived customer ICE reserved and gives it back on unarchive', async () => {
    const ice = newIce();
    const c = await api.make({ name: 'Gardien', type: 'b2b', ice });
    await api.remove(c.id);
    expect((await api.create({ name: 'Other', type: 'b2b', ice })).status).to.equal(400);
    const back = await api.patch(c.id, { status: 'active' });
    expect(back.body.data).to.deep.include({ status: 'active', ice });
  });

  it('writes customer.* events carrying the CONTRACT section 5 representation', async () => {
    const c = await api.make({ name: 'Événement', type: 'b2b', ice: newIce(), tags: ['t'] });
    const updated = (await api.patch(c.id, { name: 'Evenement 2' })).body.data;
    const archived = (await api.remove(c.id)).body.data;
    const events = await server.server.runtime.store.readStream(customerStream(c.id));
    expect(events.map((e) => e.type)).to.deep.equal(['CustomerCreated', 'CustomerUpdated', 'CustomerArchived']);
    expect(events.map((e) => (e.data as any).customer)).to.deep.equal([c, updated, archived]);
    for (const e of events) {
      expect(e.metadata).to.include({ organization_id: api.tenant.organizationId, actor: api.tenant.key.id });
      expect(e.metadata.request_id).to.be.a('string');
    }
    expect((events[1].data as any).changed_fields).to.deep.equal(['name']);
  });
});
