/** Recurring schedules over real HTTP: the nine endpoints, their errors, bounds, lists, tenant isolation. */
import { expect } from 'chai';
import { call } from '../support/fixtures.ts';
import type { TestServer } from '../support/server.ts';
import { expectError, fieldsOf } from '../invoices/support.ts';
import { dayFromToday, line, schedulesClient, withSchedulesApi, type SchedulesClient } from './support.ts';

const REPRESENTATION = [
  'id', 'name', 'customer_id', 'frequency', 'interval_count', 'day_of_month', 'day_of_week',
  'start_date', 'end_date', 'max_occurrences', 'occurrences', 'next_run_date',
  'auto_finalize', 'auto_send', 'days_until_due', 'currency', 'items', 'status',
  'created_at', 'updated_at', 'version',
];

describe('recurring schedules API', () => {
  let server: TestServer;
  let api: SchedulesClient;
  let customer: any;
  withSchedulesApi((f) => ({ server, api, customer } = f));

  describe('create and read', () => {
    it('creates a schedule (201, representation, ETag, next 5 run dates, empty history) and reads it back', async () => {
      const start = dayFromToday(40);
      const res = await api.create({ customer_id: customer.id, frequency: 'monthly', start_date: start, name: 'Loyer', items: [line('Loyer', 1, 8000)] });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const s = res.body.data;
      expect(Object.keys(s)).to.have.members([...REPRESENTATION, 'upcoming_run_dates', 'history']);
      expect(s).to.deep.include({
        name: 'Loyer', customer_id: customer.id, frequency: 'monthly', interval_count: 1, day_of_week: null, start_date: start,
        end_date: null, max_occurrences: null, occurrences: 0, auto_finalize: false, auto_send: false, days_until_due: 30,
        currency: 'MAD', status: 'active', version: 0, history: [],
      });
      expect(s.items).to.deep.equal([{ description: 'Loyer', quantity: '1', unit_price: '8000', tax_rate: '20' }]);
      expect(s.upcoming_run_dates).to.have.length(5);
      expect(s.upcoming_run_dates[0]).to.equal(s.next_run_date);
      expect(res.headers.get('etag')).to.equal('"0"');
      const read = await api.get(s.id);
      expect(read.status).to.equal(200);
      expect(read.body.data).to.deep.equal(s);
    });

    it('yearly from the 31st: day_of_month capped at 28 in every answer', async () => {
      const s = await api.make(customer.id, { frequency: 'yearly', start_date: '2031-03-31' });
      expect(s).to.include({ day_of_month: 28, next_run_date: '2031-04-28' });
      expect(s.upcoming_run_dates.slice(0, 2)).to.deep.equal(['2031-04-28', '2032-04-28']);
    });

    it('accepts every bound at its edge', async () => {
      for (const extra of [
        { interval_count: 1, day_of_month: 1, days_until_due: 0 },
        { interval_count: 12, day_of_month: 28, days_until_due: 365 },
        { frequency: 'weekly', day_of_week: 0 },
        { frequency: 'biweekly', day_of_week: 6 },
      ]) {
        const res = await api.create({ customer_id: customer.id, frequency: 'monthly', start_date: dayFromToday(40), items: [line()], ...extra });
        expect(res.status, JSON.stringify({ extra, body: res.body })).to.equal(201);
      }
    });

    it('refuses each bound one past its edge, every field at once', async () => {
      const low = await api.create({ customer_id: customer.id, frequency: 'monthly', start_date: dayFromToday(40), items: [line()], interval_count: 0, day_of_month: 0, days_until_due: -1 });
      expect(Object.keys(fieldsOf(low))).to.have.members(['/interval_count', '/day_of_month', '/days_until_due'].map((f) => f.slice(1)));
      const high = await api.create({ customer_id: customer.id, frequency: 'monthly', start_date: dayFromToday(40), items: [line()], interval_count: 13, day_of_month: 29, days_until_due: 366 });
      expect(Object.keys(fieldsOf(high))).to.have.members(['interval_count', 'day_of_month', 'days_until_due']);
      const week = await api.create({ customer_id: customer.id, frequency: 'weekly', start_date: dayFromToday(40), items: [line()], day_of_week: 7 });
      expect(Object.keys(fieldsOf(week))).to.deep.equal(['day_of_week']);
      const negative = await api.create({ customer_id: customer.id, frequency: 'weekly', start_date: dayFromToday(40), items: [line()], day_of_week: -1 });
      expect(Object.keys(fieldsOf(negative))).to.deep.equal(['day_of_week']);
    });

    it('refuses bad bodies with VALIDATION_ERROR and creates nothing', async () => {
      const missing = await api.create({});
      expect(Object.keys(fieldsOf(missing))).to.include.members(['customer_id', 'frequency', 'start_date', 'items']);
      expect(fieldsOf(await api.create({ customer_id: customer.id, frequency: 'daily', start_date: dayFromToday(40), items: [line()] }))).to.have.property('frequency');
      expect(fieldsOf(await api.create({ customer_id: customer.id, frequency: 'monthly', start_date: '2026-02-30', items: [line()] }))).to.have.property('start_date');
      expect(fieldsOf(await api.create({ customer_id: customer.id, frequency: 'monthly', start_date: dayFromToday(40), items: [line()], colour: 'red' }))).to.have.property('colour');
      expect(fieldsOf(await api.create({ customer_id: customer.id, frequency: 'monthly', start_date: dayFromToday(40), items: [] }))).to.have.property('items');
      expect(fieldsOf(await api.create({ customer_id: customer.id, frequency: 'monthly', start_date: dayFromToday(40), items: [line()], auto_send: true }))).to.have.property('auto_send');
      expect(fieldsOf(await api.create({ customer_id: customer.id, frequency: 'weekly', start_date: dayFromToday(40), items: [line()], day_of_month: 3 }))).to.have.property('day_of_month');
      expect(fieldsOf(await api.create({ customer_id: '0190a1b2-0000-7000-8000-000000000001', frequency: 'monthly', start_date: dayFromToday(40), items: [line()] }))).to.have.property('customer_id');
      const endBefore = await api.create({ customer_id: customer.id, frequency: 'monthly', start_date: dayFromToday(40), day_of_month: 1, end_date: dayFromToday(39), items: [line()] });
      expect(fieldsOf(endBefore).end_date).to.match(/first run date/);
      expect((await api.list()).body.meta.pagination.total).to.equal(0);
    });

    it('Idempotency-Key: the same create twice answers the same schedule once', async () => {
      const body = { customer_id: customer.id, frequency: 'weekly', start_date: dayFromToday(40), items: [line()] };
      const a = await api.create(body, { 'idempotency-key': 'sched-1' });
      const b = await api.create(body, { 'idempotency-key': 'sched-1' });
      expect(a.status).to.equal(201);
      expect(b.body.data.id).to.equal(a.body.data.id);
      expect((await api.list()).body.meta.pagination.total).to.equal(1);
    });
  });

  describe('quota (CONTRACT section 8: active + paused)', () => {
    it('professional: 60 concurrent creates give exactly 50 schedules and 10 QUOTA_EXCEEDED; a delete frees one', async () => {
      const pro = await schedulesClient(server, {});
      await server.database.db.updateTable('accounts').set({ plan: 'professional' }).where('id', '=', pro.invoices.tenant.accountId).execute();
      const who = await pro.invoices.customer();
      const body = { customer_id: who.id, frequency: 'monthly', start_date: dayFromToday(40), items: [line()] };
      const replies = await Promise.all(Array.from({ length: 60 }, () => pro.create(body)));
      const created = replies.filter((r) => r.status === 201);
      const refused = replies.filter((r) => r.status !== 201);
      expect(created).to.have.length(50);
      expect(refused).to.have.length(10);
      for (const r of refused) expectError(r, 403, 'QUOTA_EXCEEDED');
      const org = await call(`${server.url}/organization`, pro.invoices.secret);
      expect(org.body.data.api_quotas).to.include({ recurring_schedules_limit: 50, recurring_schedules_used: 50 });
      expectError(await pro.create(body), 403, 'QUOTA_EXCEEDED');
      expect((await pro.remove(created[7].body.data.id)).status).to.equal(200);
      expect((await pro.create(body)).status).to.equal(201);
      expectError(await pro.create(body), 403, 'QUOTA_EXCEEDED');
    });
  });

  describe('quota after a plan downgrade', () => {
    it('fiduciaire 60 schedules, then professional: every create is refused until fewer than 50 are left', async () => {
      const client = await schedulesClient(server, {});
      const accounts = server.database.db.updateTable('accounts').where('id', '=', client.invoices.tenant.accountId);
      await accounts.set({ plan: 'fiduciaire' }).execute();
      const who = await client.invoices.customer();
      const body = { customer_id: who.id, frequency: 'monthly', start_date: dayFromToday(40), items: [line()] };
      const created: string[] = [];
      for (const r of await Promise.all(Array.from({ length: 60 }, () => client.create(body)))) {
        expect(r.status, JSON.stringify(r.body)).to.equal(201);
        created.push(r.body.data.id);
      }
      // Spread over the fiduciaire quota's slots (1..500): most of them sit above professional's 50.
      await accounts.set({ plan: 'professional' }).execute();
      for (const r of await Promise.all(Array.from({ length: 10 }, () => client.create(body)))) expectError(r, 403, 'QUOTA_EXCEEDED');
      for (const id of created.slice(0, 11)) expect((await client.remove(id)).status).to.equal(200);
      expect((await client.create(body)).status).to.equal(201);
      expectError(await client.create(body), 403, 'QUOTA_EXCEEDED');
      const org = await call(`${server.url}/organization`, client.invoices.secret);
      expect(org.body.data.api_quotas).to.include({ recurring_schedules_limit: 50, recurring_schedules_used: 50 });
    });
  });

  describe('update (PUT)', () => {
    it('changes the fields sent, bumps version and ETag; If-Match with a stale version is VERSION_CONFLICT', async () => {
      const s = await api.make(customer.id, { day_of_month: 5 });
      const res = await api.put(s.id, { days_until_due: 15, auto_finalize: true, auto_send: true, items: [line('Abonnement', 3, 100)] }, { 'if-match': '"0"' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data).to.include({ days_until_due: 15, auto_finalize: true, auto_send: true, version: 1 });
      expect(res.headers.get('etag')).to.equal('"1"');
      expectError(await api.put(s.id, { days_until_due: 20 }, { 'if-match': '"0"' }), 409, 'VERSION_CONFLICT');
      expect(fieldsOf(await api.put(s.id, { auto_finalize: false }))).to.have.property('auto_send');
      expect(fieldsOf(await api.put(s.id, { days_until_due: 366 }))).to.have.property('days_until_due');
      expect(fieldsOf(await api.put(s.id, { start_date: '2030-01-01' }))).to.have.property('start_date');
    });

    it('a frequency change re-anchors at the current next run date', async () => {
      const s = await api.make(customer.id, { start_date: '2031-01-07' });
      const res = await api.put(s.id, { frequency: 'weekly' });
      expect(res.body.data).to.include({ frequency: 'weekly', day_of_week: 2, day_of_month: null, next_run_date: '2031-01-07' });
      expect(res.body.data.upcoming_run_dates.slice(0, 3)).to.deep.equal(['2031-01-07', '2031-01-14', '2031-01-21']);
    });

    it('completed schedules are read-only (INVALID_STATE on update, generate, pause, resume)', async () => {
      const s = await api.make(customer.id, { max_occurrences: 1 });
      expect((await api.action(s.id, 'generate')).status).to.equal(201);
      const done = (await api.get(s.id)).body.data;
      expect(done).to.include({ status: 'completed', next_run_date: null, occurrences: 1 });
      expect(done.upcoming_run_dates).to.deep.equal([]);
      expectError(await api.put(s.id, { days_until_due: 3 }), 409, 'INVALID_STATE');
      expectError(await api.action(s.id, 'generate'), 409, 'INVALID_STATE');
      expectError(await api.action(s.id, 'pause'), 409, 'INVALID_STATE');
      expectError(await api.action(s.id, 'resume'), 409, 'INVALID_STATE');
      // A body the schema refuses hears its own rules only: the stored schedule's would be moot (INVALID_STATE).
      expect(fieldsOf(await api.put(s.id, { interval_count: 0, max_occurrences: 1, auto_send: true }))).to.have.keys('interval_count');
      const active = await api.make(customer.id);
      expect(fieldsOf(await api.action(active.id, 'resume', { next_run_date: '2020-01-01', extra: 1 }))).to.have.keys('extra');
    });
  });

  describe('generate', () => {
    it('answers 201 with a draft invoice issued today (default), due after days_until_due; it counts as the next occurrence', async () => {
      const s = await api.make(customer.id, { days_until_due: 10 });
      const res = await api.action(s.id, 'generate');
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const invoice = res.body.data;
      expect(invoice).to.include({ status: 'draft', invoice_number: null, customer_id: customer.id, issue_date: dayFromToday(0), due_date: dayFromToday(10), total: '1200.00' });
      const after = (await api.get(s.id)).body.data;
      expect(after.occurrences).to.equal(1);
      expect(after.next_run_date).to.equal(s.upcoming_run_dates[1]);
      expect(after.history).to.have.length(1);
      expect(after.history[0]).to.include({ run_date: s.next_run_date, invoice_id: invoice.id, invoice_number: null, status: 'success', error: null });
      expect((await api.invoices.get(invoice.id)).status).to.equal(200);
    });

    it('with issue_date, auto_finalize and auto_send: a sent invoice with its number; the run date is the occurrence consumed', async () => {
      const s = await api.make(customer.id, { auto_finalize: true, auto_send: true });
      const res = await api.action(s.id, 'generate', { issue_date: '2026-05-02' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data).to.include({ status: 'sent', issue_date: '2026-05-02', invoice_number: 'INV-2026-000001' });
      const history = (await api.history(s.id)).body.data;
      expect(history[0]).to.include({ run_date: s.next_run_date, invoice_number: 'INV-2026-000001', status: 'success' });
    });

    it('an inactive customer: CUSTOMER_INACTIVE, no invoice, no draft left behind', async () => {
      const s = await api.make(customer.id);
      const patched = await call(`${api.invoices.url}/customers/${customer.id}`, api.invoices.secret, { method: 'PATCH', body: { status: 'inactive' } });
      expect(patched.status).to.equal(200);
      expectError(await api.action(s.id, 'generate'), 409, 'CUSTOMER_INACTIVE');
      expect((await api.invoices.list()).body.meta.pagination.total).to.equal(0);
      expect((await api.get(s.id)).body.data).to.include({ occurrences: 0, next_run_date: s.next_run_date });
    });

    it('If-Match: a stale version is VERSION_CONFLICT and generates nothing; the current one generates', async () => {
      const s = await api.make(customer.id);
      expect((await api.action(s.id, 'generate')).status).to.equal(201); // version 1
      expectError(await api.action(s.id, 'generate', undefined, { 'if-match': '"0"' }), 409, 'VERSION_CONFLICT');
      expect((await api.get(s.id)).body.data).to.include({ occurrences: 1, version: 1 });
      expect((await api.invoices.list()).body.data).to.have.length(1);
      expect((await api.action(s.id, 'generate', undefined, { 'if-match': '"1"' })).status).to.equal(201);
    });

    it('a paused schedule: INVALID_STATE; a bad issue_date: VALIDATION_ERROR', async () => {
      const s = await api.make(customer.id);
      expect(fieldsOf(await api.action(s.id, 'generate', { issue_date: 'tomorrow' }))).to.have.property('issue_date');
      // The due date it would give is past the last date there is: the issue date sent is at fault, not a due_date never sent.
      expect(Object.keys(fieldsOf(await api.action(s.id, 'generate', { issue_date: '9999-12-31' })))).to.deep.equal(['issue_date']);
      await api.action(s.id, 'pause');
      expectError(await api.action(s.id, 'generate'), 409, 'INVALID_STATE');
    });
  });

  describe('history', () => {
    it("a run's draft finalized by hand: the history shows its number", async () => {
      const s = await api.make(customer.id);
      const draft = (await api.action(s.id, 'generate')).body.data;
      expect((await api.history(s.id)).body.data[0]).to.include({ invoice_id: draft.id, invoice_number: null });
      const finalized = (await api.invoices.action(draft.id, 'finalize')).body.data;
      expect(finalized.invoice_number).to.match(/^INV-\d{4}-\d{6}$/);
      expect((await api.history(s.id)).body.data[0]).to.include({ invoice_id: draft.id, invoice_number: finalized.invoice_number });
      expect((await api.get(s.id)).body.data.history[0]).to.include({ invoice_number: finalized.invoice_number });
    });

    it('latest first, limit 1..100 (default 20); out of range or malformed: VALIDATION_ERROR', async () => {
      const s = await api.make(customer.id, { frequency: 'weekly' });
      for (let i = 0; i < 3; i++) expect((await api.action(s.id, 'generate')).status).to.equal(201);
      const all = (await api.history(s.id)).body.data;
      expect(all.map((h: any) => h.run_date)).to.deep.equal([...s.upcoming_run_dates.slice(0, 3)].reverse());
      expect(Object.keys(all[0])).to.have.members(['id', 'run_date', 'invoice_id', 'invoice_number', 'status', 'error', 'created_at']);
      expect((await api.history(s.id, 'limit=1')).body.data).to.deep.equal([all[0]]);
      expect((await api.history(s.id, 'limit=100')).body.data).to.have.length(3);
      expect(fieldsOf(await api.history(s.id, 'limit=0'))).to.have.property('limit');
      expect(fieldsOf(await api.history(s.id, 'limit=101'))).to.have.property('limit');
      expect(fieldsOf(await api.history(s.id, 'limit=abc'))).to.have.property('limit');
    });
  });

  describe('pause and resume', () => {
    it('pause: paused, next_run_date null; twice: INVALID_STATE; resume on an active one: INVALID_STATE', async () => {
      const s = await api.make(customer.id);
      expectError(await api.action(s.id, 'resume'), 409, 'INVALID_STATE');
      const paused = await api.action(s.id, 'pause');
      expect(paused.status).to.equal(200);
      expect(paused.body.data).to.include({ status: 'paused', next_run_date: null, version: 1 });
      expectError(await api.action(s.id, 'pause'), 409, 'INVALID_STATE');
    });

    it('resume without a date keeps the lattice; with one, re-anchors there; past or day 29: VALIDATION_ERROR', async () => {
      const s = await api.make(customer.id, { day_of_month: 3 });
      await api.action(s.id, 'pause');
      const plain = await api.action(s.id, 'resume');
      expect(plain.body.data).to.include({ status: 'active', next_run_date: s.next_run_date, day_of_month: 3 });
      await api.action(s.id, 'pause');
      expect(fieldsOf(await api.action(s.id, 'resume', { next_run_date: dayFromToday(-1) }))).to.have.property('next_run_date');
      expect(fieldsOf(await api.action(s.id, 'resume', { next_run_date: '2031-05-29' }))).to.have.property('next_run_date');
      const anchored = await api.action(s.id, 'resume', { next_run_date: '2031-05-20' });
      expect(anchored.body.data).to.include({ status: 'active', next_run_date: '2031-05-20', day_of_month: 20 });
      expect(anchored.body.data.upcoming_run_dates.slice(0, 2)).to.deep.equal(['2031-05-20', '2031-06-20']);
    });
  });

  describe('ids', () => {
    it('every endpoint takes the id in upper case, as GET does (one spelling from the pipeline on)', async () => {
      const s = await api.make(customer.id);
      const id = s.id.toUpperCase();
      expect((await api.get(id)).status).to.equal(200);
      expect((await api.put(id, { name: 'Majuscules' })).body.data.name).to.equal('Majuscules');
      expect((await api.action(id, 'generate')).status).to.equal(201);
      expect((await api.action(id, 'pause')).body.data.status).to.equal('paused');
      expect((await api.action(id, 'resume')).body.data.status).to.equal('active');
      expect((await api.history(id)).body.data).to.have.length(1);
      expect((await api.remove(id)).body.data).to.deep.equal({ id: s.id, deleted: true });
    });
  });

  describe('delete', () => {
    it('removes the schedule and its history (then 404) but never its invoices', async () => {
      const s = await api.make(customer.id);
      const invoice = (await api.action(s.id, 'generate')).body.data;
      const res = await api.remove(s.id);
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({ id: s.id, deleted: true });
      expectError(await api.get(s.id), 404, 'NOT_FOUND');
      expectError(await api.history(s.id), 404, 'NOT_FOUND');
      expectError(await api.remove(s.id), 404, 'NOT_FOUND');
      expect((await api.invoices.get(invoice.id)).status).to.equal(200);
      const runs = await server.database.db.selectFrom('schedule_runs').selectAll().where('schedule_id', '=', s.id).execute();
      expect(runs).to.deep.equal([]);
    });
  });

  describe('list', () => {
    it('filters by status, customer_id, frequency and accent-insensitive search on name and customer name, combined', async () => {
      const other = await api.invoices.customer({ name: 'Société Générale Électrique' });
      const a = await api.make(customer.id, { name: 'Loyer bureau', frequency: 'monthly' });
      const b = await api.make(customer.id, { name: 'Maintenance', frequency: 'weekly' });
      const c = await api.make(other.id, { name: 'Hébergement', frequency: 'monthly' });
      await api.action(b.id, 'pause');
      const ids = async (q: string) => {
        const res = await api.list(q);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        return res.body.data.map((s: any) => s.id);
      };
      expect(await ids('')).to.deep.equal([c.id, b.id, a.id]);
      expect(await ids('order=asc')).to.deep.equal([a.id, b.id, c.id]);
      expect(await ids('status=paused')).to.deep.equal([b.id]);
      expect(await ids(`customer_id=${other.id}`)).to.deep.equal([c.id]);
      expect(await ids('frequency=monthly')).to.deep.equal([c.id, a.id]);
      expect(await ids('search=HEBERGEMENT')).to.deep.equal([c.id]);
      expect(await ids('search=electrique')).to.deep.equal([c.id]);
      expect(await ids(`search=loyer&frequency=monthly&status=active&customer_id=${customer.id}`)).to.deep.equal([a.id]);
      expect(await ids('search=loyer&frequency=weekly')).to.deep.equal([]);
      // the customer's rename reaches the search
      await call(`${api.invoices.url}/customers/${other.id}`, api.invoices.secret, { method: 'PATCH', body: { name: 'Marjane Holding' } });
      await waitFor(async () => (await ids('search=marjane')).length === 1);
      expect(await ids('search=electrique')).to.deep.equal([]);
    });

    it('pagination edges: per_page 1..100, page past the end is empty; malformed values: VALIDATION_ERROR', async () => {
      for (let i = 0; i < 3; i++) await api.make(customer.id);
      const first = await api.list('per_page=1&page=1');
      expect(first.body.data).to.have.length(1);
      expect(first.body.meta.pagination).to.include({ total: 3, page: 1, perPage: 1, totalPages: 3 });
      expect((await api.list('per_page=1&page=3')).body.data).to.have.length(1);
      expect((await api.list('per_page=1&page=4')).body.data).to.deep.equal([]);
      expect((await api.list('per_page=100')).body.data).to.have.length(3);
      for (const q of ['per_page=0', 'per_page=101', 'page=0', 'per_page=abc', 'status=done', 'frequency=daily', 'customer_id=nope', 'order=up']) {
        expect(fieldsOf(await api.list(q)), q).to.be.an('object');
      }
    });
  });

  describe('every field error in one answer (docs/api-decisions.md "Errors")', () => {
    const AUTO_SEND = 'requires auto_finalize (only a finalized invoice can be sent)';
    /** Events of this tenant's organization in the store: a refused request writes none (no schedule, no quota slot). */
    const eventCount = async () =>
      (await server.database.pool.query(`select count(*)::int as n from es_events where metadata->>'organization_id' = $1`, [api.invoices.tenant.organizationId])).rows[0].n;

    it('create: end_date is checked beside the other fields, whichever layer refuses them, and a refused create writes nothing', async () => {
      // Monthly on the 10th from 2031-03-11: the first run is 2031-04-10.
      const body = { customer_id: customer.id, frequency: 'monthly', start_date: '2031-03-11', day_of_month: 10, end_date: '2031-04-09', items: [line()] };
      const endDate = 'must not be before the first run date (2031-04-10)';
      const before = await eventCount();
      expect(fieldsOf(await api.create(body))).to.deep.equal({ end_date: endDate });
      // The schema refuses interval_count; the domain rules refuse auto_send and the customer.
      expect(fieldsOf(await api.create({ ...body, interval_count: 0 }))).to.deep.equal({ interval_count: 'must be greater than or equal to 1', end_date: endDate });
      expect(fieldsOf(await api.create({ ...body, auto_send: true }))).to.deep.equal({ auto_send: AUTO_SEND, end_date: endDate });
      expect(fieldsOf(await api.create({ ...body, customer_id: '0190a1b2-0000-7000-8000-000000000001' }))).to.deep.equal({
        customer_id: 'must name an existing customer',
        end_date: endDate,
      });
      // A calendar that cannot place the first run still has none before start_date.
      expect(fieldsOf(await api.create({ ...body, frequency: 'daily', end_date: '2031-03-10' }))).to.deep.equal({
        frequency: 'must be one of: weekly, biweekly, monthly, quarterly, biannually, yearly',
        end_date: 'must not be before start_date (2031-03-11)',
      });
      expect(await eventCount()).to.equal(before);
      expect((await api.list()).body.meta.pagination.total).to.equal(0);
    });

    it('PUT: a calendar change is placed beside the domain errors of other fields (its move past end_date, the end_date it makes too early)', async () => {
      // Monthly on the 10th, next run 2031-03-10, which is also its end_date.
      const s = await api.make(customer.id, { start_date: '2031-03-10', day_of_month: 10, end_date: '2031-03-10' });
      const zero = [line('Conseil', 0, 100)]; // the schema passes it, the domain rules refuse it
      const quantity = 'must be greater than 0';
      const moved = 'moves the next run date to 2031-03-20, after end_date (2031-03-10); change end_date too';
      expect(fieldsOf(await api.put(s.id, { day_of_month: 20, items: zero }))).to.deep.equal({ 'items[0].quantity': quantity, day_of_month: moved });
      expect(fieldsOf(await api.put(s.id, { day_of_month: 20, end_date: '2031-03-15', items: zero }))).to.deep.equal({
        'items[0].quantity': quantity,
        end_date: 'must not be before the next run date (2031-03-20)',
      });
      // A day field of the other frequencies is refused on its own; the day sent still places the next run.
      expect(fieldsOf(await api.put(s.id, { day_of_month: 20, day_of_week: 3 }))).to.deep.equal({
        day_of_week: 'does not apply to monthly schedules (use day_of_month)',
        day_of_month: moved,
      });
      expect((await api.get(s.id)).body.data.version).to.equal(0);
    });

    it('PUT: a body the schema refuses (or a bad If-Match) still hears the rules on the stored schedule: auto_send, end_date, max_occurrences, day fields, calendar', async () => {
      // Monthly on the 10th, auto_finalize off; once generated, the next run is 2031-04-10, its end_date.
      const s = await api.make(customer.id, { start_date: '2031-03-10', day_of_month: 10, end_date: '2031-04-10' });
      expect((await api.action(s.id, 'generate')).status).to.equal(201);
      const name = { name: 'must be at most 200 characters long' };
      expect(fieldsOf(await api.put(s.id, { interval_count: 0, auto_send: true }))).to.deep.equal({ interval_count: 'must be greater than or equal to 1', auto_send: AUTO_SEND });
      expect(fieldsOf(await api.put(s.id, { name: 'x'.repeat(201), end_date: '2031-04-09', max_occurrences: 1, day_of_week: 3 }))).to.deep.equal({
        ...name,
        end_date: 'must not be before the next run date (2031-04-10)',
        max_occurrences: 'must be greater than the 1 invoices already generated',
        day_of_week: 'does not apply to monthly schedules (use day_of_month)',
      });
      expect(fieldsOf(await api.put(s.id, { name: 'x'.repeat(201), day_of_month: 20 }))).to.deep.equal({
        ...name,
        day_of_month: 'moves the next run date to 2031-04-20, after end_date (2031-04-10); change end_date too',
      });
      expect(fieldsOf(await api.put(s.id, { auto_send: true }, { 'if-match': 'W/"1"' }))).to.deep.equal({
        'If-Match': 'must be a strong ETag such as "3": a weak ETag (W/...) never matches (RFC 9110 strong comparison)',
        auto_send: AUTO_SEND,
      });
      expect((await api.get(s.id)).body.data).to.include({ version: 1, auto_send: false, end_date: '2031-04-10', day_of_month: 10 });
      // Another organization's schedule tells nothing of itself: only the body's own rules.
      const stranger = await schedulesClient(server);
      expect(fieldsOf(await stranger.put(s.id, { interval_count: 0, auto_send: true, max_occurrences: 1 }))).to.deep.equal({ interval_count: 'must be greater than or equal to 1' });
    });

    it('generate and resume: the date sent is checked on the stored schedule beside the schema\'s errors and a bad If-Match', async () => {
      const s = await api.make(customer.id, { day_of_month: 3 });
      const noRoom = 'leaves no room for the due date 30 days later (dates end with the year 9999)';
      expect(fieldsOf(await api.action(s.id, 'generate', { issue_date: '9999-12-31', colour: 'red' }))).to.deep.equal({ colour: 'is not allowed', issue_date: noRoom });
      expect(fieldsOf(await api.action(s.id, 'generate', { issue_date: '9999-12-31' }, { 'if-match': 'W/"0"' }))).to.have.all.keys('If-Match', 'issue_date');
      expect((await api.invoices.list()).body.meta.pagination.total).to.equal(0);
      await api.action(s.id, 'pause');
      expect(fieldsOf(await api.action(s.id, 'resume', { next_run_date: '2031-05-29', colour: 'red' }))).to.deep.equal({
        colour: 'is not allowed',
        next_run_date: 'must fall on day 1 to 28 of a month for monthly schedules',
      });
      expect(fieldsOf(await api.action(s.id, 'resume', { next_run_date: dayFromToday(-1) }, { 'if-match': 'W/"1"' }))).to.deep.equal({
        'If-Match': 'must be a strong ETag such as "3": a weak ETag (W/...) never matches (RFC 9110 strong comparison)',
        next_run_date: `must be today (${dayFromToday(0)}) or later`,
      });
      expect((await api.get(s.id)).body.data).to.include({ status: 'paused', version: 1, occurrences: 0 });
    });
  });

  describe('tenant isolation', () => {
    it("another organization's schedule id is 404 on all nine endpoints, and never listed", async () => {
      const s = await api.make(customer.id);
      const stranger = await schedulesClient(server);
      const replies = [
        await stranger.get(s.id),
        await stranger.put(s.id, { days_until_due: 3 }),
        await stranger.remove(s.id),
        await stranger.action(s.id, 'generate'),
        await stranger.history(s.id),
        await stranger.action(s.id, 'pause'),
        await stranger.action(s.id, 'resume'),
        await stranger.get('not-a-uuid'),
      ];
      for (const r of replies) expectError(r, 404, 'NOT_FOUND');
      expect((await stranger.list()).body.data).to.deep.equal([]);
      const strangerCustomer = await stranger.invoices.customer();
      expect(fieldsOf(await api.create({ customer_id: strangerCustomer.id, frequency: 'monthly', start_date: dayFromToday(40), items: [line()] }))).to.have.property('customer_id');
      // and the schedule is untouched
      expect((await api.get(s.id)).body.data).to.include({ version: 0, status: 'active', occurrences: 0 });
    });
  });
});

/** Polls a condition the projectors make true (no fixed sleep: each check is a real read). */
async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 50));
  }
}
