/**
 * The customers projector on real PostgreSQL: rows as the events say, every
 * batch delivered twice, events out of order, and a rebuild of the live
 * tables that equals them row for row.
 */
import { expect } from 'chai';
import { sql, type Kysely } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { archiveCustomer, createCustomer, updateCustomer, type CustomerWrite } from '../../src/commands/customer/handler.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { EventStore, RecordedEvent } from '../../src/eventstore/types.ts';
import { customersProjector } from '../../src/projections/customers.ts';
import { rebuildProjection } from '../../src/projections/rebuild.ts';
import { foldForSearch } from '../../src/shared/search.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { startTestServer } from '../support/server.ts';
import { customersClient } from './support.ts';

const rows = async (db: Kysely<any>) => (await sql`select * from customers order by id`.execute(db)).rows;

async function apply(db: Kysely<any>, events: RecordedEvent[]): Promise<void> {
  await db.transaction().execute((trx) => customersProjector.apply(events, trx));
}

describe('customers projector', () => {
  let t: TestDatabase;
  let store: EventStore;
  let events: RecordedEvent[];
  const org = uuidv7();
  const otherOrg = uuidv7();
  let ids: string[];

  before(async () => {
    t = await freshDatabase();
    store = await createPostgresEventStore(t.pool, t.url);
    const w = (organizationId: string): CustomerWrite => ({
      store,
      organizationId,
      metadata: { organization_id: organizationId, actor: 'key-1', request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date().toISOString() },
    });
    ids = [uuidv7(), uuidv7(), uuidv7()];
    await createCustomer(w(org), ids[0], { name: 'École Atlas', type: 'b2b', ice: '001122334455667', email: 'Info@Atlas.MA', tags: ['a', 'b'] });
    await createCustomer(w(org), ids[1], { name: 'Karim', type: 'b2c', address: { street: '5 Rue Fès', city: 'Rabat' } });
    await createCustomer(w(otherOrg), ids[2], { name: 'Voisin', type: 'b2b', ice: '001122334455667' });
    await updateCustomer(w(org), ids[0], { name: 'École Atlas Group', ice: '009999999999999' });
    await archiveCustomer(w(org), ids[1]);
    await updateCustomer(w(org), ids[1], { status: 'active', tags: ['back'] });
    events = (await store.readAll(null, 1000)).filter((e) => customersProjector.handles.includes(e.type));
    expect(events).to.have.length(6);
  });
  after(async () => {
    await store?.close();
    await t?.drop();
  });
  beforeEach(() => sql`delete from customers`.execute(t.db));

  it('stores each customer as its last event says, with the organization and folded search text', async () => {
    await apply(t.db, events);
    const [atlas, karim, voisin] = await Promise.all(ids.map(async (id) => (await sql<any>`select * from customers where id = ${id}`.execute(t.db)).rows[0]));
    expect(atlas).to.deep.include({
      organization_id: org,
      name: 'École Atlas Group',
      ice: '009999999999999',
      tags: ['a', 'b'],
      address_country: 'MA',
      status: 'active',
      version: 1,
      search_text: 'ecole atlas group\ninfo@atlas.ma\n009999999999999',
    });
    expect(karim).to.deep.include({ address_street: '5 Rue Fès', address_city: 'Rabat', status: 'active', tags: ['back'], version: 2, archived_at: null });
    expect(voisin).to.deep.include({ organization_id: otherOrg, ice: '001122334455667', version: 0 });
    expect(atlas.created_at).to.be.instanceOf(Date);
  });

  it('gives the same rows when every batch is delivered twice, in any batch size', async () => {
    await apply(t.db, events);
    const once = await rows(t.db);
    for (const size of [1, 2, 4]) {
      await sql`delete from customers`.execute(t.db);
      for (let i = 0; i < events.length; i += size) {
        const batch = events.slice(i, i + size);
        await apply(t.db, batch);
        await apply(t.db, batch);
      }
      expect(await rows(t.db), `batch size ${size}`).to.deep.equal(once);
    }
  });

  it('keeps the newest snapshot when an older event arrives after a newer one', async () => {
    await apply(t.db, events);
    const once = await rows(t.db);
    await apply(t.db, [...events].reverse());
    for (const e of events) await apply(t.db, [e]);
    expect(await rows(t.db)).to.deep.equal(once);
  });

  it('refuses an event without its organization instead of guessing one', async () => {
    const broken = { ...events[0], metadata: { ...events[0].metadata, organization_id: null } };
    let failed: Error | null = null;
    await apply(t.db, [broken]).catch((err) => (failed = err));
    expect(failed).to.be.instanceOf(Error);
  });
});

describe('customers projector: rebuild', () => {
  it('rebuilds tables equal row for row to the live ones', async () => {
    const server = await startTestServer();
    try {
      const a = await customersClient(server);
      const b = await customersClient(server);
      for (let i = 0; i < 5; i++) await a.make({ name: `Société ${i}`, type: i % 2 ? 'b2c' : 'b2b', tags: [`t${i}`] });
      const c = await b.make({ name: 'Rebuilt', type: 'b2b', ice: '001122334455667' });
      await b.patch(c.id, { email: 'x@y.ma', address: { city: 'Tanger' } });
      await b.remove(c.id);
      const db = server.database.db;
      const live = await rows(db);
      expect(live).to.have.length(6);
      const result = await rebuildProjection(db, server.server.runtime.store, customersProjector);
      expect(result.rows).to.deep.equal({ customers: 6 });
      expect(await rows(db)).to.deep.equal(live);
    } finally {
      await server.stop();
    }
  });
});

describe('search folding', () => {
  const cases: [string, string][] = [
    ['École', 'ecole'],
    ['LYCÉE  Ibn\tKhaldoun', 'lycee ibn khaldoun'],
    ['Çağrı İnşaat', 'cagri insaat'],
    ['ﬁduciaire', 'fiduciaire'],
    ['Cœur de Ville', 'coeur de ville'],
    ['００１２', '0012'],
    ['  ', ''],
  ];
  for (const [input, folded] of cases) {
    it(`folds ${JSON.stringify(input)} to ${JSON.stringify(folded)}`, () => {
      expect(foldForSearch(input)).to.equal(folded);
    });
  }
});
