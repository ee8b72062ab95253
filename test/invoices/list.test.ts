/** GET /invoices: pagination edges, order, every filter alone and combined, tenant isolation, malformed queries. */
import { expect } from 'chai';
import { startTestServer, type TestServer } from '../support/server.ts';
import { fieldsOf, invoicesClient, type InvoicesClient } from './support.ts';

describe('invoices API: list', () => {
  let server: TestServer;
  let api: InvoicesClient;
  let alice: any;
  let bob: any;
  /** Created in this order (ids and created_at ascend). */
  const made: any[] = [];

  before(async () => {
    server = await startTestServer();
    api = await invoicesClient(server);
    alice = await api.customer({ name: 'Alice SARL' });
    bob = await api.customer({ name: 'Bob SA' });
    // 24 invoices: customers alternate, issue dates spread over 2026-01-01 .. 2026-01-24.
    for (let i = 0; i < 24; i++) {
      const day = String(i + 1).padStart(2, '0');
      made.push(await api.draft(i % 2 === 0 ? alice.id : bob.id, { issue_date: `2026-01-${day}` }));
    }
    // Statuses: 0..5 finalized, 6..9 sent, 10..11 paid, 12 void, the rest drafts.
    for (let i = 0; i < 13; i++) expect((await api.action(made[i].id, 'finalize')).status).to.equal(200);
    for (let i = 6; i < 12; i++) await api.action(made[i].id, 'send');
    for (let i = 10; i < 12; i++) await api.action(made[i].id, 'pay');
    await api.action(made[12].id, 'void', { reason: 'Erreur' });
    // Another organization's invoices never show.
    const other = await invoicesClient(server);
    await other.draft((await other.customer()).id, { issue_date: '2026-01-05' });
  });
  after(() => server?.stop());

  const ids = (res: any) => res.body.data.map((i: any) => i.id);
  const idsOf = (indexes: number[]) => indexes.map((i) => made[i].id);
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k);

  it('newest first by default, 20 per page, with meta.pagination', async () => {
    const res = await api.list();
    expect(res.status).to.equal(200);
    expect(ids(res)).to.deep.equal(idsOf(range(4, 23).reverse()));
    expect(res.body.meta.pagination).to.deep.equal({ total: 24, page: 1, perPage: 20, totalPages: 2 });
    const page2 = await api.list('page=2');
    expect(ids(page2)).to.deep.equal(idsOf([3, 2, 1, 0]));
  });

  it('order=asc, per_page bounds 1 and 100, a page past the end is empty', async () => {
    expect(ids(await api.list('order=asc&per_page=5&page=2'))).to.deep.equal(idsOf(range(5, 9)));
    const one = await api.list('per_page=1&page=24');
    expect(ids(one)).to.deep.equal(idsOf([0]));
    expect(one.body.meta.pagination).to.deep.equal({ total: 24, page: 24, perPage: 1, totalPages: 24 });
    const all = await api.list('per_page=100');
    expect(all.body.data).to.have.length(24);
    expect(all.body.meta.pagination.totalPages).to.equal(1);
    const past = await api.list('page=3');
    expect(past.status).to.equal(200);
    expect(past.body.data).to.deep.equal([]);
    expect(past.body.meta.pagination).to.deep.equal({ total: 24, page: 3, perPage: 20, totalPages: 2 });
  });

  it('filters by status, customer and issue date (inclusive), alone and combined', async () => {
    expect(ids(await api.list('status=finalized&order=asc'))).to.deep.equal(idsOf(range(0, 5)));
    expect(ids(await api.list('status=sent&order=asc'))).to.deep.equal(idsOf(range(6, 9)));
    expect(ids(await api.list('status=paid&order=asc'))).to.deep.equal(idsOf([10, 11]));
    expect(ids(await api.list('status=void'))).to.deep.equal(idsOf([12]));
    expect((await api.list('status=draft')).body.meta.pagination.total).to.equal(11);
    expect(ids(await api.list(`customer_id=${bob.id}&order=asc&per_page=100`))).to.deep.equal(idsOf(range(0, 23).filter((i) => i % 2 === 1)));
    expect(ids(await api.list('date_from=2026-01-03&date_to=2026-01-05&order=asc'))).to.deep.equal(idsOf([2, 3, 4]));
    expect(ids(await api.list('date_from=2026-01-24'))).to.deep.equal(idsOf([23]));
    expect(ids(await api.list('date_to=2026-01-01'))).to.deep.equal(idsOf([0]));
    const combined = await api.list(`status=finalized&customer_id=${alice.id}&date_from=2026-01-02&date_to=2026-01-05&order=asc`);
    expect(ids(combined)).to.deep.equal(idsOf([2, 4]));
    expect(combined.body.meta.pagination).to.deep.equal({ total: 2, page: 1, perPage: 20, totalPages: 1 });
    const none = await api.list('date_from=2026-02-01');
    expect(none.body.data).to.deep.equal([]);
    expect(none.body.meta.pagination).to.deep.equal({ total: 0, page: 1, perPage: 20, totalPages: 0 });
    // List items are the representation without `customer`, and equal the single read otherwise.
    const [first] = (await api.list('status=paid&per_page=1')).body.data;
    const { customer: _c, ...single } = (await api.get(first.id)).body.data;
    expect(first).to.deep.equal(single);
  });

  it('VALIDATION_ERROR on any malformed query value', async () => {
    expect(fieldsOf(await api.list('per_page=101'))).to.deep.equal({ per_page: 'must be less than or equal to 100' });
    expect(fieldsOf(await api.list('per_page=0&page=0'))).to.deep.equal({
      per_page: 'must be greater than or equal to 1',
      page: 'must be greater than or equal to 1',
    });
    expect(fieldsOf(await api.list('per_page=abc&page=1.5'))).to.have.keys(['per_page', 'page']);
    expect(fieldsOf(await api.list('status=overdue&order=up'))).to.deep.equal({
      status: 'must be one of: draft, finalized, sent, paid, void',
      order: 'must be one of: asc, desc',
    });
    expect(fieldsOf(await api.list('date_from=2026-13-01&date_to=yesterday&customer_id=42'))).to.have.keys(['date_from', 'date_to', 'customer_id']);
    expect(fieldsOf(await api.list('status=draft&status=paid'))).to.have.keys(['status']);
    expect(fieldsOf(await api.list('colour=red'))).to.deep.equal({ colour: 'is not allowed' });
    expect(fieldsOf(await api.list('page=99999999999999999999'))).to.have.keys(['page']);
  });
});
