/** Invoices over real HTTP: every error code with its status, and never a 500 on bad input. */
import { expect } from 'chai';
import { v7 as uuidv7 } from 'uuid';
import { call } from '../support/fixtures.ts';
import type { TestServer } from '../support/server.ts';
import { expectError, fieldsOf, invoicesClient, line, withInvoicesApi, type InvoicesClient } from './support.ts';

describe('invoices API: errors', () => {
  let server: TestServer;
  let api: InvoicesClient;
  let customer: any;
  withInvoicesApi((f) => ({ server, api, customer } = f));

  it('VALIDATION_ERROR on bad create bodies, with every field named', async () => {
    expect(fieldsOf(await api.create({}))).to.deep.equal({ customer_id: 'is required', issue_date: 'is required', items: 'is required' });
    expect(
      fieldsOf(await api.create({ customer_id: 'nope', issue_date: '2026-02-30', currency: 'mad', items: [{ description: '', quantity: 1 }], colour: 1 })),
    ).to.deep.equal({
      customer_id: 'must be a valid uuid',
      issue_date: 'must be a valid date (YYYY-MM-DD)',
      currency: 'has an invalid format',
      'items[0].description': 'must not be empty',
      'items[0].unit_price': 'is required',
      colour: 'is not allowed',
    });
    const base = { customer_id: customer.id, issue_date: '2026-03-01' };
    expect(
      fieldsOf(await api.create({ ...base, currency: 'QQQ', items: [line('a', 0, '1.23456'), line('b', '1e3', -1, 101), line('c', 1, 1, '5.555')] })),
    ).to.deep.equal({
      currency: 'must be a supported ISO 4217 currency code',
      'items[0].quantity': 'must be greater than 0',
      'items[0].unit_price': 'must have at most 4 decimal places',
      'items[1].quantity': 'must be a number',
      'items[1].unit_price': 'must be greater than or equal to 0',
      'items[1].tax_rate': 'must be at most 100',
      'items[2].tax_rate': 'must have at most 2 decimal places',
    });
    expect(fieldsOf(await api.create({ ...base, items: Array.from({ length: 501 }, () => line()) }))).to.deep.equal({ items: 'must have at most 500 items' });
    expect(fieldsOf(await api.create({ ...base, items: [{ ...line(), quantity: true }] }))).to.deep.equal({ 'items[0].quantity': 'must be a number or a string' });
    expect(fieldsOf(await api.create([1, 2]))).to.have.property('body');
    // What PostgreSQL's jsonb would refuse (NUL, lone surrogates) and years the number format cannot hold.
    expect(fieldsOf(await api.create({ ...base, issue_date: '0999-12-31', items: [line()] }))).to.deep.equal({ issue_date: 'has an invalid format' });
    expect(
      fieldsOf(await api.create({ ...base, notes: 'a\u0000b', payment_terms: '\ud800', items: [line('x\u0000')] })),
    ).to.deep.equal({
      notes: 'must not contain control characters (other than tab and line breaks) or invalid Unicode',
      payment_terms: 'must not contain control characters (other than tab and line breaks) or invalid Unicode',
      'items[0].description': 'must not contain control characters (other than tab and line breaks) or invalid Unicode',
    });
    // ...and what XML 1.0 cannot carry (the UBL document): C0 controls but tab and line breaks, U+FFFF.
    expect(fieldsOf(await api.create({ ...base, notes: 'a\u0001b', payment_terms: 'x\uffff', items: [line('Conseil\u001b[31m')] }))).to.deep.equal({
      notes: 'must not contain control characters (other than tab and line breaks) or invalid Unicode',
      payment_terms: 'must not contain control characters (other than tab and line breaks) or invalid Unicode',
      'items[0].description': 'must not contain control characters (other than tab and line breaks) or invalid Unicode',
    });
    // Beside the schema's own errors, in the same answer.
    expect(fieldsOf(await api.create({ ...base, notes: 'a\u0000b', items: [{ ...line(), quantity: true }] }))).to.deep.equal({
      notes: 'must not contain control characters (other than tab and line breaks) or invalid Unicode',
      'items[0].quantity': 'must be a number or a string',
    });
    // ...and the bidirectional overrides, which would print "evil #4" as "#4 live" on the PDF (Arabic with its
    // marks and isolates is taken: below).
    expect(fieldsOf(await api.create({ ...base, notes: 'evil \u202e#4', payment_terms: '\u202dabc', items: [line('ok')] }))).to.deep.equal({
      notes: 'must not contain the bidirectional overrides U+202D and U+202E (they print text reversed)',
      payment_terms: 'must not contain the bidirectional overrides U+202D and U+202E (they print text reversed)',
    });
    const infinite = `{"customer_id":"${customer.id}","issue_date":"2026-01-01","items":[{"description":"x","quantity":1e400,"unit_price":1}]}`;
    expect(fieldsOf(await api.create(infinite, { 'content-type': 'application/json' }))).to.deep.equal({ 'items[0].quantity': 'must be a number' });
    // A JSON number a double cannot hold is read as the client wrote it, not rounded by JSON.parse
    // (1.00000000000000001 was read as 1, 999999999.99999999999 as 1000000000, 1e-400 as 0).
    const exact = (items: string) => `{"customer_id":"${customer.id}","issue_date":"2026-01-01","notes":"1.00000000000000001 stays text","items":[${items}]}`;
    expect(
      fieldsOf(
        await api.create(
          exact('{"description":"x","quantity":1.00000000000000001,"unit_price":999999999.99999999999,"tax_rate":1e-400},{"description":"y","quantity":100000.0000000000001,"unit_price":1e-99999999999999999999}'),
          { 'content-type': 'application/json' },
        ),
      ),
    ).to.deep.equal({
      'items[0].quantity': 'must have at most 4 decimal places',
      'items[0].unit_price': 'must have at most 4 decimal places',
      'items[0].tax_rate': 'must be a number',
      'items[1].quantity': 'must have at most 4 decimal places',
      'items[1].unit_price': 'must be a number',
    });
    const kept = await api.create(exact('{"description":"x","quantity":1.50,"unit_price":1e2,"tax_rate":20.000000000000000}'), { 'content-type': 'application/json' });
    expect(kept.status).to.equal(201);
    expect(kept.body.data.items[0]).to.include({ quantity: '1.5', unit_price: '100', tax_rate: '20' });
    expect(kept.body.data.notes).to.equal('1.00000000000000001 stays text');
    expect(fieldsOf(await api.create({ ...base, items: [line('x', '99999999999999999999', 1)] }))).to.deep.equal({ 'items[0].quantity': 'must be at most 1000000000' });
    const notJson = await call(`${api.url}/invoices`, api.secret, { method: 'POST', body: '{"items": [', headers: { 'content-type': 'application/json' } });
    expectError(notJson, 400, 'INVALID_JSON');
    expect((await api.list()).body.meta.pagination.total).to.equal(1); // the exact numbers' draft
    // Tab and line breaks are text.
    expect((await api.create({ ...base, notes: 'ligne 1\r\n\tligne 2', items: [line()] })).status).to.equal(201);
    // Arabic with a right-to-left mark (U+200F) and an isolate (U+2067..U+2069): no override, taken.
    expect((await api.create({ ...base, notes: 'خدمات \u200fاستشارية \u2067INV-12\u2069', items: [line('استشارة')] })).status).to.equal(201);
  });

  it('VALIDATION_ERROR on customer_id: unknown, another organization\'s, archived, inactive', async () => {
    const other = await invoicesClient(server);
    const foreign = await other.customer();
    const archived = await api.customer();
    expect((await call(`${api.url}/customers/${archived.id}`, api.secret, { method: 'DELETE' })).status).to.equal(200);
    const inactive = await api.customer();
    expect((await call(`${api.url}/customers/${inactive.id}`, api.secret, { method: 'PATCH', body: { status: 'inactive' } })).status).to.equal(200);
    const body = (customer_id: string) => ({ customer_id, issue_date: '2026-03-01', items: [line()] });
    expect(fieldsOf(await api.create(body(uuidv7())))).to.deep.equal({ customer_id: 'must name an existing customer' });
    expect(fieldsOf(await api.create(body(foreign.id)))).to.deep.equal({ customer_id: 'must name an existing customer' });
    expect(fieldsOf(await api.create(body(archived.id)))).to.deep.equal({ customer_id: 'customer is archived' });
    expect(fieldsOf(await api.create(body(inactive.id)))).to.deep.equal({ customer_id: 'customer is inactive' });
    const draft = await api.draft(customer.id);
    expect(fieldsOf(await api.patch(draft.id, { customer_id: foreign.id }))).to.deep.equal({ customer_id: 'must name an existing customer' });
    expect(fieldsOf(await api.patch(draft.id, { customer_id: inactive.id }))).to.deep.equal({ customer_id: 'customer is inactive' });
    expect(fieldsOf(await api.patch(draft.id, { internal_notes: 'x', issue_date: null }))).to.deep.equal({
      internal_notes: 'is not allowed',
      issue_date: 'must be a string',
    });
    // An upper-case UUID names the same customer.
    expect((await api.patch(draft.id, { customer_id: customer.id.toUpperCase(), notes: 'n' })).status).to.equal(200);
  });

  it('finalize answers VALIDATION_ERROR when the invoice cannot legally be issued', async () => {
    const empty = await api.draft(customer.id, { items: [] });
    expect(fieldsOf(await api.action(empty.id, 'finalize'))).to.deep.equal({ items: 'must contain at least one line' });
    const free = await api.draft(customer.id, { items: [line('Gratuit', 1, 0)], due_date: '2026-03-01' });
    expect(fieldsOf(await api.action(free.id, 'finalize'))).to.deep.equal({ total: 'must be greater than 0', due_date: 'must not be before issue_date' });
    const noIce = await api.customer({ ice: null });
    const b2b = await api.draft(noIce.id);
    expect(fieldsOf(await api.action(b2b.id, 'finalize'))).to.deep.equal({ 'customer.ice': 'is required to invoice a B2B customer' });
    const b2c = await api.customer({ type: 'b2c', ice: null });
    expect((await api.action((await api.draft(b2c.id)).id, 'finalize')).status).to.equal(200);
    const gone = await api.draft(customer.id);
    await call(`${api.url}/customers/${customer.id}`, api.secret, { method: 'DELETE' });
    expect(fieldsOf(await api.action(gone.id, 'finalize'))).to.deep.equal({ customer_id: 'customer is archived' });

    const bare = await invoicesClient(server, { ice: null });
    const c = await bare.customer();
    const d = await bare.draft(c.id);
    expect(fieldsOf(await bare.action(d.id, 'finalize'))).to.deep.equal({ 'organization.ice': 'is required to issue an invoice' });
    // Refused finalizes lock nothing and take no number: the next one gets 000002 (after the b2c one).
    expect((await api.get(empty.id)).body.data).to.include({ status: 'draft', version: 0 });
    await api.patch(free.id, { items: [line()], due_date: null, customer_id: b2c.id });
    expect((await api.action(free.id, 'finalize')).body.data.invoice_number).to.equal('INV-2026-000002');
  });

  it('INVOICE_NOT_EDITABLE, INVOICE_NOT_DRAFT, INVALID_STATUS_TRANSITION, CANNOT_VOID_PAID, ALREADY_VOIDED (409)', async () => {
    const draft = await api.draft(customer.id);
    expectError(await api.action(draft.id, 'send'), 409, 'INVALID_STATUS_TRANSITION');
    expectError(await api.action(draft.id, 'pay'), 409, 'INVALID_STATUS_TRANSITION');
    expectError(await api.action(draft.id, 'void', { reason: 'x' }), 409, 'INVALID_STATUS_TRANSITION');
    const inv = (await api.action(draft.id, 'finalize')).body.data;
    expectError(await api.patch(inv.id, { notes: 'late' }), 409, 'INVOICE_NOT_EDITABLE');
    expectError(await api.action(inv.id, 'finalize'), 409, 'INVOICE_NOT_DRAFT');
    expect((await api.action(inv.id, 'send')).status).to.equal(200);
    expectError(await api.action(inv.id, 'send'), 409, 'INVALID_STATUS_TRANSITION');
    expect((await api.action(inv.id, 'pay')).status).to.equal(200);
    expectError(await api.action(inv.id, 'pay'), 409, 'INVALID_STATUS_TRANSITION');
    expectError(await api.action(inv.id, 'void', { reason: 'x' }), 409, 'CANNOT_VOID_PAID');
    const other = await api.finalized(customer.id);
    expect((await api.action(other.id, 'void', { reason: 'Doublon' })).status).to.equal(200);
    expectError(await api.action(other.id, 'void', { reason: 'again' }), 409, 'ALREADY_VOIDED');
    expectError(await api.action(other.id, 'pay'), 409, 'INVALID_STATUS_TRANSITION');
    expectError(await api.action(other.id, 'send'), 409, 'INVALID_STATUS_TRANSITION');
    expectError(await api.patch(other.id, { notes: 'x' }), 409, 'INVOICE_NOT_EDITABLE');
    expect((await api.get(other.id)).body.data).to.include({ status: 'void', version: 3 });
  });

  it('VALIDATION_ERROR on bad action bodies: void reason, pay fields', async () => {
    const inv = await api.finalized(customer.id);
    expect(fieldsOf(await api.action(inv.id, 'void'))).to.deep.equal({ reason: 'is required' });
    expect(fieldsOf(await api.action(inv.id, 'void', { reason: '   ' }))).to.deep.equal({ reason: 'must not be empty' });
    expect(fieldsOf(await api.action(inv.id, 'void', { reason: 'x'.repeat(501) }))).to.deep.equal({ reason: 'must be at most 500 characters long' });
    // Both layers in one answer: the schema's unknown field and the decider's paid_at rule (docs/api-decisions.md "Errors").
    expect(fieldsOf(await api.action(inv.id, 'pay', { paid_at: 'yesterday', method: 'cash' }))).to.deep.equal({
      method: 'is not allowed',
      paid_at: 'must be an ISO 8601 datetime with a time zone',
    });
    expect(fieldsOf(await api.action(inv.id, 'pay', { paid_at: 'yesterday' }))).to.deep.equal({ paid_at: 'must be an ISO 8601 datetime with a time zone' });
    expect(fieldsOf(await api.action(inv.id, 'send', { now: true }))).to.deep.equal({ now: 'is not allowed' });
    expect((await api.get(inv.id)).body.data.status).to.equal('finalized');
  });

  it('two concurrent finalizes of one draft: exactly one wins, the other is INVOICE_NOT_DRAFT', async () => {
    const drafts = await Promise.all(Array.from({ length: 5 }, () => api.draft(customer.id)));
    const results = await Promise.all(drafts.flatMap((d) => [api.action(d.id, 'finalize'), api.action(d.id, 'finalize')]));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).to.have.length(5);
    for (const r of results.filter((x) => x.status !== 200)) expectError(r, 409, 'INVOICE_NOT_DRAFT');
    expect(ok.map((r) => r.body.data.invoice_number).sort()).to.deep.equal([1, 2, 3, 4, 5].map((n) => `INV-2026-00000${n}`));
  });

  it('NOT_FOUND for another organization\'s invoice, an unknown id and a non-UUID id, on every endpoint', async () => {
    const other = await invoicesClient(server);
    const theirs = await other.draft((await other.customer()).id);
    for (const id of [theirs.id, uuidv7(), 'not-a-uuid']) {
      expectError(await api.get(id), 404, 'NOT_FOUND');
      expectError(await api.events(id), 404, 'NOT_FOUND');
      expectError(await api.patch(id, { notes: 'x' }), 404, 'NOT_FOUND');
      for (const name of ['finalize', 'send', 'pay'] as const) expectError(await api.action(id, name), 404, 'NOT_FOUND');
      expectError(await api.action(id, 'void', { reason: 'x' }), 404, 'NOT_FOUND');
    }
    expect((await other.get(theirs.id)).body.data).to.include({ status: 'draft', version: 0, notes: null });
    expect((await api.list(`customer_id=${theirs.customer_id}`)).body.data).to.deep.equal([]);
  });

  it('VERSION_CONFLICT on a stale If-Match (PATCH and actions); a malformed one is VALIDATION_ERROR', async () => {
    const draft = await api.draft(customer.id);
    await api.patch(draft.id, { notes: 'v1' });
    const stale = await api.patch(draft.id, { notes: 'v2' }, { 'if-match': '"0"' });
    expectError(stale, 409, 'VERSION_CONFLICT');
    expect(stale.body.error.details).to.deep.equal({ current_version: 1 });
    expectError(await api.action(draft.id, 'finalize', undefined, { 'if-match': '"0"' }), 409, 'VERSION_CONFLICT');
    expect(fieldsOf(await api.patch(draft.id, { notes: 'v2' }, { 'if-match': 'yesterday' }))).to.deep.equal({ 'If-Match': 'must be an ETag of this API, e.g. "3"' });
    expect((await api.get(draft.id)).body.data).to.include({ notes: 'v1', version: 1 });
    const fin = await api.action(draft.id, 'finalize', undefined, { 'if-match': '"1"' });
    expect(fin.status).to.equal(200);
    expectError(await api.action(draft.id, 'send', undefined, { 'if-match': '"1"' }), 409, 'VERSION_CONFLICT');
    expect((await api.action(draft.id, 'send', undefined, { 'if-match': fin.headers.get('etag')! })).status).to.equal(200);
  });

  it('FORBIDDEN without the endpoint\'s scope (finalize needs invoices:finalize, not invoices:write)', async () => {
    const writer = await invoicesClient(server, { scopes: ['invoices:read', 'invoices:write', 'customers:write'] });
    const draft = await writer.draft((await writer.customer()).id);
    const res = await writer.action(draft.id, 'finalize');
    expectError(res, 403, 'FORBIDDEN');
    expect(res.body.error.details).to.deep.equal({ required_scopes: ['invoices:finalize'] });
    const reader = await invoicesClient(server, { scopes: ['invoices:read'] });
    expectError(await reader.create({}), 403, 'FORBIDDEN');
    expect((await reader.list()).status).to.equal(200);
  });
});
