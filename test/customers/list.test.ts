/** GET /customers over real HTTP: pagination edges, order, filters, search. */
import { expect } from 'chai';
import { startTestServer, type TestServer } from '../support/server.ts';
import { customersClient, fieldsOf, type CustomersClient } from './support.ts';

describe('customers API: list', () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer();
  });
  after(() => server?.stop());

  describe('pagination and order', () => {
    let api: CustomersClient;
    const names: string[] = []; // in creation order

    before(async () => {
      api = await customersClient(server);
      for (let i = 1; i <= 7; i++) names.push((await api.make({ name: `Client ${i}`, type: 'b2c' })).name);
    });

    it('pages newest first by default with meta.pagination', async () => {
      const res = await api.list('per_page=3');
      expect(res.status).to.equal(200);
      expect(res.body.data.map((c: any) => c.name)).to.deep.equal(['Client 7', 'Client 6', 'Client 5']);
      expect(res.body.meta.pagination).to.deep.equal({ total: 7, page: 1, perPage: 3, totalPages: 3 });
      const last = await api.list('per_page=3&page=3');
      expect(last.body.data.map((c: any) => c.name)).to.deep.equal(['Client 1']);
    });

    it('orders ascending on request, by created_at then id', async () => {
      const res = await api.list('order=asc&per_page=100');
      expect(res.body.data.map((c: any) => c.name)).to.deep.equal(names);
      const ids = res.body.data.map((c: any) => `${c.created_at} ${c.id}`);
      expect(ids).to.deep.equal([...ids].sort());
    });

    it('answers an empty page past the end with the right total', async () => {
      const res = await api.list('page=4&per_page=3');
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal([]);
      expect(res.body.meta.pagination).to.deep.equal({ total: 7, page: 4, perPage: 3, totalPages: 3 });
      expect((await api.list('per_page=100')).body.data).to.have.length(7);
      expect((await api.list()).body.meta.pagination.perPage).to.equal(20);
    });

    it('rejects out-of-range and malformed query values', async () => {
      expect(fieldsOf(await api.list('per_page=101'))).to.deep.equal({ per_page: 'must be less than or equal to 100' });
      expect(fieldsOf(await api.list('per_page=0'))).to.deep.equal({ per_page: 'must be greater than or equal to 1' });
      expect(fieldsOf(await api.list('page=0'))).to.deep.equal({ page: 'must be greater than or equal to 1' });
      expect(Object.keys(fieldsOf(await api.list('page=1e30')))).to.deep.equal(['page']);
      expect(fieldsOf(await api.list('page=abc&per_page=2.5&order=up&type=b2g&status=gone&sort=name'))).to.deep.equal({
        page: 'must be an integer',
        per_page: 'must be an integer',
        order: 'must be one of: asc, desc',
        type: 'must be one of: b2b, b2c',
        status: 'must be one of: active, inactive, archived',
        sort: 'is not allowed',
      });
      expect(Object.keys(fieldsOf(await api.list('search=a&search=b')))).to.deep.equal(['search']);
    });
  });

  describe('filters and search', () => {
    let api: CustomersClient;
    const ids: Record<string, string> = {};

    before(async () => {
      api = await customersClient(server);
      const make = async (key: string, body: Record<string, unknown>) => (ids[key] = (await api.make(body)).id);
      await make('ecole', { name: 'École Atlas', type: 'b2b', ice: '001122334455667' });
      await make('lycee', { name: 'Lycée Ibn Khaldoun', type: 'b2b', email: 'Direction@ECOLE-ibn.ma' });
      await make('karim', { name: 'Karim Benali', type: 'b2c', email: 'karim@mail.ma' });
      await make('sara', { name: 'Sara 100%_off', type: 'b2c' });
      await make('old', { name: 'Ancienne école', type: 'b2b' });
      await api.remove(ids.old);
      await api.patch(ids.karim, { status: 'inactive' });
    });

    const found = async (query: string) => ((await api.list(query)).body.data as { id: string }[]).map((c) => c.id).sort();
    const expected = (...keys: string[]) => keys.map((k) => ids[k]).sort();

    it('matches name, email and ICE, case- and accent-insensitively', async () => {
      expect(await found('search=ecole')).to.deep.equal(expected('ecole', 'lycee', 'old'));
      expect(await found(`search=${encodeURIComponent('ÉCOLE')}`)).to.deep.equal(expected('ecole', 'lycee', 'old'));
      expect(await found(`search=${encodeURIComponent('lycée ibn')}`)).to.deep.equal(expected('lycee'));
      expect(await found('search=KARIM%40MAIL')).to.deep.equal(expected('karim'));
      expect(await found('search=2233445')).to.deep.equal(expected('ecole'));
      expect(await found('search=nobody')).to.deep.equal([]);
    });

    it('treats LIKE wildcards literally and a blank search as no filter', async () => {
      expect(await found('search=100%25_')).to.deep.equal(expected('sara'));
      expect(await found('search=%25')).to.deep.equal(expected('sara'));
      expect(await found('search=_')).to.deep.equal(expected('sara'));
      expect(await found('search=%20%20')).to.have.length(5);
    });

    it('combines type, status and search', async () => {
      expect(await found('type=b2b')).to.deep.equal(expected('ecole', 'lycee', 'old'));
      expect(await found('type=b2b&status=active')).to.deep.equal(expected('ecole', 'lycee'));
      expect(await found('status=archived')).to.deep.equal(expected('old'));
      expect(await found('status=inactive&type=b2c')).to.deep.equal(expected('karim'));
      expect(await found('type=b2b&status=archived&search=ECOLE')).to.deep.equal(expected('old'));
      const page = await api.list('type=b2b&search=ecole&per_page=1&page=2');
      expect(page.body.meta.pagination).to.deep.equal({ total: 3, page: 2, perPage: 1, totalPages: 3 });
    });

    it('never shows another organization’s customers', async () => {
      const other = await customersClient(server);
      await other.make({ name: 'École Voisine', type: 'b2b' });
      expect(await found('search=ecole')).to.deep.equal(expected('ecole', 'lycee', 'old'));
      expect((await other.list()).body.meta.pagination.total).to.equal(1);
    });
  });
});
