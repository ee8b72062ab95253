/** Invoices over real HTTP: every endpoint's happy path, the representation, read your writes, ETags, history. */
import { expect } from 'chai';
import type { Request } from 'express';
import { interceptQueries, queryText } from '../support/pool-queries.ts';
import { fingerprint } from '../../src/api/pipeline/idempotency.ts';
import { call } from '../support/fixtures.ts';
import type { TestServer } from '../support/server.ts';
import { fieldsOf, line, withInvoicesApi, type InvoicesClient } from './support.ts';

const FIELDS = [
  'id', 'invoice_number', 'status', 'customer_id', 'customer_name', 'customer', 'currency', 'issue_date', 'due_date',
  'payment_terms', 'notes', 'internal_notes', 'items', 'subtotal', 'total_tax', 'total', 'tax_breakdown', 'amount_due',
  'finalized_at', 'sent_at', 'paid_at', 'payment_method', 'payment_reference', 'voided_at', 'void_reason',
  'created_at', 'updated_at', 'version',
];

describe('invoices API: lifecycle', () => {
  let api: InvoicesClient;
  let customer: any;
  let server: TestServer;
  withInvoicesApi((f) => ({ api, customer, server } = f));

  it('creates a draft: 201, the contract representation, decimal strings, ETag, and reads it back', async () => {
    const res = await api.create({
      customer_id: customer.id,
      issue_date: '2026-03-14',
      due_date: '2026-04-13',
      payment_terms: 'Net 30',
      notes: 'Merci pour votre confiance.',
      internal_notes: 'Relancer en avril',
      items: [line('Audit', 3, 1250.5, 20), line('Frais', '0.335', '10', 10), line('Formation', 1, 100)],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.headers.get('etag')).to.equal('"0"');
    const inv = res.body.data;
    expect(Object.keys(inv)).to.deep.equal(FIELDS);
    expect(inv).to.include({ invoice_number: null, status: 'draft', customer_id: customer.id, customer_name: customer.name, currency: 'MAD', version: 0 });
    expect(inv.items).to.deep.equal([
      { position: 1, description: 'Audit', quantity: '3', unit_price: '1250.5', tax_rate: '20', total: '3751.50' },
      { position: 2, description: 'Frais', quantity: '0.335', unit_price: '10', tax_rate: '10', total: '3.35' },
      { position: 3, description: 'Formation', quantity: '1', unit_price: '100', tax_rate: '20', total: '100.00' },
    ]);
    // VAT per rate on the sum of that rate's lines: 20% of 3851.50, 10% of 3.35 (0.335 rounds half up).
    expect(inv.tax_breakdown).to.deep.equal([
      { rate: '20', taxable_amount: '3851.50', tax_amount: '770.30' },
      { rate: '10', taxable_amount: '3.35', tax_amount: '0.34' },
    ]);
    expect(inv).to.include({ subtotal: '3854.85', total_tax: '770.64', total: '4625.49', amount_due: '4625.49' });
    expect(inv.customer).to.deep.equal({
      id: customer.id, name: customer.name, type: 'b2b', ice: customer.ice, email: customer.email, phone: customer.phone, address: customer.address,
    });
    expect(inv.created_at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const got = await api.get(inv.id);
    expect(got.status).to.equal(200);
    expect(got.headers.get('etag')).to.equal('"0"');
    expect(got.body.data).to.deep.equal(inv);
    const listed = await api.list();
    expect(listed.body.data).to.have.length(1);
    const { customer: _c, ...withoutCustomer } = inv;
    expect(listed.body.data[0]).to.deep.equal(withoutCustomer);
  });

  it('takes the currency\'s minor units (JPY none, KWD three)', async () => {
    const jpy = await api.draft(customer.id, { currency: 'JPY', items: [line('A', 3, '333.5', 10)] });
    expect(jpy).to.include({ subtotal: '1001', total_tax: '100', total: '1101' });
    const kwd = await api.draft(customer.id, { currency: 'KWD', items: [line('A', 1, '1.2345', 5)] });
    expect(kwd).to.include({ subtotal: '1.235', total_tax: '0.062', total: '1.297' });
  });

  it('walks draft -> finalized -> sent -> paid, each answer read back at once, ETag = version', async () => {
    const draft = await api.draft(customer.id);
    const patched = await api.patch(draft.id, { items: [line('Conseil', 4, 250), line('Déplacement', 1, 80, 0)], notes: 'v2' }, { 'if-match': '"0"' });
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    expect(patched.headers.get('etag')).to.equal('"1"');
    expect(patched.body.data).to.include({ version: 1, notes: 'v2', subtotal: '1080.00', total_tax: '200.00', total: '1280.00' });
    expect((await api.get(draft.id)).body.data.items).to.have.length(2);

    const fin = await api.action(draft.id, 'finalize', undefined, { 'if-match': '"1"' });
    expect(fin.status, JSON.stringify(fin.body)).to.equal(200);
    // Lock (2) and number (3): both are revisions of the stream.
    expect(fin.body.data).to.include({ status: 'finalized', invoice_number: 'INV-2026-000001', version: 3 });
    expect(fin.headers.get('etag')).to.equal('"3"');
    expect(fin.body.data.finalized_at).to.be.a('string');
    expect((await api.list('status=finalized')).body.data.map((i: any) => i.id)).to.deep.equal([draft.id]);

    const sent = await api.action(draft.id, 'send');
    expect(sent.body.data).to.include({ status: 'sent', version: 4 });
    expect(sent.body.data.sent_at).to.be.a('string');
    const paid = await api.action(draft.id, 'pay', { paid_at: '2026-04-01T10:00:00+01:00', payment_method: 'virement', payment_reference: 'VIR-889' });
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    expect(paid.body.data).to.include({ status: 'paid', amount_due: '0.00', total: '1280.00', paid_at: '2026-04-01T09:00:00.000Z', payment_method: 'virement', payment_reference: 'VIR-889' });
    expect((await api.get(draft.id)).body.data).to.deep.equal(paid.body.data);
  });

  it('pays a finalized invoice without a body (paid_at now) and voids a sent one with its reason', async () => {
    const a = await api.finalized(customer.id);
    const paid = await api.action(a.id, 'pay');
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    expect(Date.now() - Date.parse(paid.body.data.paid_at)).to.be.lessThan(60_000);
    const b = await api.finalized(customer.id);
    expect((await api.action(b.id, 'send')).status).to.equal(200);
    const voided = await api.action(b.id, 'void', { reason: 'Erreur de facturation' });
    expect(voided.status, JSON.stringify(voided.body)).to.equal(200);
    expect(voided.body.data).to.include({ status: 'void', void_reason: 'Erreur de facturation', amount_due: voided.body.data.total });
    expect(voided.body.data.voided_at).to.be.a('string');
    expect([a.invoice_number, b.invoice_number]).to.deep.equal(['INV-2026-000001', 'INV-2026-000002']);
  });

  it('numbers per calendar year of the issue date', async () => {
    const a = await api.finalized(customer.id, { issue_date: '2025-12-31' });
    const b = await api.finalized(customer.id, { issue_date: '2026-01-01' });
    const c = await api.finalized(customer.id, { issue_date: '2025-06-30' });
    expect([a, b, c].map((i) => i.invoice_number)).to.deep.equal(['INV-2025-000001', 'INV-2026-000001', 'INV-2025-000002']);
  });

  it('shows a draft\'s customer as it is now and an issued invoice\'s buyer as frozen at finalize', async () => {
    const draft = await api.draft(customer.id);
    const issued = await api.finalized(customer.id);
    const renamed = await call(`${api.url}/customers/${customer.id}`, api.secret, { method: 'PATCH', body: { name: 'Nouveau Nom SA', phone: '+212600000000' } });
    expect(renamed.status).to.equal(200);
    const d = (await api.get(draft.id)).body.data;
    expect(d.customer).to.include({ name: 'Nouveau Nom SA', phone: '+212600000000' });
    expect(d.customer_name).to.equal(customer.name); // the draft's snapshot until it is edited or issued
    const i = (await api.get(issued.id)).body.data;
    expect(i.customer).to.include({ name: customer.name, phone: customer.phone });
    const fin = await api.action(draft.id, 'finalize');
    expect(fin.body.data.customer_name).to.equal('Nouveau Nom SA');
  });

  it('GET /invoices/{id}/events: the history oldest first, internal lock included, data = the snapshots', async () => {
    const inv = await api.draft(customer.id);
    await api.patch(inv.id, { notes: 'Bon de commande 42' });
    await api.action(inv.id, 'finalize');
    await api.action(inv.id, 'send');
    const voided = (await api.action(inv.id, 'void', { reason: 'Annulée' })).body.data;
    const res = await api.events(inv.id);
    expect(res.status).to.equal(200);
    expect(res.headers.get('etag')).to.equal('"5"');
    const events = res.body.data;
    expect(events.map((e: any) => [e.type, e.revision])).to.deep.equal([
      ['invoice.created', 0], ['invoice.updated', 1], ['invoice.finalization_started', 2],
      ['invoice.finalized', 3], ['invoice.sent', 4], ['invoice.voided', 5],
    ]);
    expect(events.every((e: any) => e.actor === api.tenant.key.id)).to.equal(true);
    expect(events[1].data.changed_fields).to.include('notes');
    expect(events[5].data.reason).to.equal('Annulée');
    // The read model and the last event's snapshot are the same invoice, field for field.
    const { customer: _c, ...withoutCustomer } = voided;
    expect(events[5].data.invoice).to.deep.equal(withoutCustomer);
    expect(Date.parse(events[0].occurred_at)).to.be.at.most(Date.parse(events[5].occurred_at));
  });

  it('a PATCH that changes nothing appends nothing and keeps the version', async () => {
    const inv = await api.draft(customer.id, { notes: 'same' });
    const res = await api.patch(inv.id, { notes: 'same' });
    expect(res.status).to.equal(200);
    expect(res.body.data.version).to.equal(0);
    expect((await api.events(inv.id)).body.data).to.have.length(1);
  });

  it('Idempotency-Key: POST /invoices and finalize replay their first answer and do the work once', async () => {
    const body = { customer_id: customer.id, issue_date: '2026-05-01', items: [line()] };
    const first = await api.create(body, { 'idempotency-key': 'create-1' });
    const again = await api.create(body, { 'idempotency-key': 'create-1' });
    expect(again.status).to.equal(201);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
    const reused = await api.create({ ...body, notes: 'other' }, { 'idempotency-key': 'create-1' });
    expect(reused.status).to.equal(409);
    expect(reused.body.error.code).to.equal('IDEMPOTENCY_KEY_REUSED');
    expect((await api.list()).body.meta.pagination.total).to.equal(1);

    const id = first.body.data.id;
    const [f1, f2] = await Promise.all([
      api.action(id, 'finalize', undefined, { 'idempotency-key': 'fin-1' }),
      api.action(id, 'finalize', undefined, { 'idempotency-key': 'fin-1' }),
    ]);
    expect([f1.status, f2.status]).to.deep.equal([200, 200]);
    expect(f1.body).to.deep.equal(f2.body);
    expect(f1.body.data.invoice_number).to.equal('INV-2026-000001');
    const f3 = await api.action(id, 'finalize', undefined, { 'idempotency-key': 'fin-1' });
    expect(f3.body).to.deep.equal(f1.body);
    // The id in upper case names the same invoice, so the same request: a replay, not IDEMPOTENCY_KEY_REUSED.
    const upper = await api.action(id.toUpperCase(), 'finalize', undefined, { 'idempotency-key': 'fin-1' });
    expect(upper.headers.get('idempotent-replayed')).to.equal('true');
    expect(upper.body).to.deep.equal(f1.body);
    expect((await api.events(id)).body.data).to.have.length(3);
  });

  it('Idempotency-Key: a create that waited for another attempt reads its customer afresh, not as it was fetched with the key', async () => {
    // Another attempt of the same request holds the key (a row as its claim leaves it); this one
    // authenticates, fetching the customer with its key (src/api/pipeline/prefetch.ts), and finds the key
    // taken. The customer is archived meanwhile; the other attempt then gives the key back, as after a 5xx.
    const fresh = await api.customer();
    const text = JSON.stringify({ customer_id: fresh.id, issue_date: '2026-05-01', items: [line()] });
    const request = { method: 'POST', originalUrl: '/api/v1/invoices', body: Buffer.from(text) } as unknown as Request;
    await server.database.pool.query(
      `insert into idempotency_keys (api_key_id, idempotency_key, fingerprint, claim, seed, locked_until) values ($1, 'held', $2, gen_random_uuid(), gen_random_uuid(), now() + interval '1 hour')`,
      [api.tenant.key.id, fingerprint(request, api.tenant.organizationId)],
    );
    // The signal: the server's first claim attempt has run (and found the key taken).
    let attempted!: () => void;
    const firstAttempt = new Promise<void>((resolve) => (attempted = resolve));
    const pool = server.server.runtime.database.pool;
    const stop = interceptQueries(pool, (query, run) => {
      if (!/insert into idempotency_keys/i.test(queryText(query))) return null;
      const sent = run();
      sent.then(() => attempted(), () => {});
      return sent;
    });
    try {
      const waiting = api.create(text, { 'idempotency-key': 'held' });
      await firstAttempt;
      expect((await call(`${api.url}/customers/${fresh.id}`, api.secret, { method: 'DELETE' })).status).to.equal(200);
      await server.database.pool.query(`update idempotency_keys set locked_until = now() - interval '1 millisecond' where idempotency_key = 'held'`);
      expect(fieldsOf(await waiting)).to.deep.equal({ customer_id: 'customer is archived' });
    } finally {
      stop();
    }
  });
});
