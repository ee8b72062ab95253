/**
 * HTTP conventions over real HTTP (docs/api-decisions.md "Status codes",
 * "Errors", "Lists", "Compression", "Beyond the reference"): Location on
 * every 201, 405 with Allow, weak If-Match refused, every field error in one
 * answer, gzip/br that leaves bodies (files and replays included) intact,
 * paid_at not in the future, and Link navigation of lists.
 */
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { processParts } from '../../src/main.ts';
import { call, createKey, createTenant } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { invoicesClient, line, type InvoicesClient } from '../invoices/support.ts';

interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The bytes on the wire. */
  wire: Buffer;
  /** The body after Content-Encoding is undone. */
  body: Buffer;
}

/** A request whose answer is read as bytes, with Content-Encoding undone by hand (fetch would hide it). */
function raw(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const wire = Buffer.concat(chunks);
        const encoding = res.headers['content-encoding'];
        const body = encoding === 'gzip' ? gunzipSync(wire) : encoding === 'br' ? brotliDecompressSync(wire) : wire;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, wire, body });
      });
    });
    req.on('error', reject);
    if (init.body !== undefined) req.write(init.body);
    req.end();
  });
}

describe('HTTP conventions', function () {
  this.timeout(180_000);
  let server: TestServer;
  let api: InvoicesClient;
  let customer: any;

  before(async () => {
    server = await startTestServer();
    api = await invoicesClient(server);
    customer = await api.customer();
  });
  after(() => server?.stop());

  const auth = () => ({ authorization: `Bearer ${api.secret}` });

  describe('Location on every 201', () => {
    it('every route that answers 201 declares what it created, and the document shows the header', async () => {
      const creates = processParts.routes.filter((r) => r.successStatus === 201);
      expect(creates.map((r) => `${r.method} ${r.path}`)).to.include.members(['post /invoices', 'post /customers', 'post /recurring-invoices', 'post /recurring-invoices/:id/generate', 'post /organizations']);
      for (const r of creates) expect(r.location, `${r.method} ${r.path}`).to.match(/^\/[a-z-]+\/:id$/);
      const doc = await (await fetch(`${server.root}/openapi.json`)).json();
      expect(doc.paths['/invoices'].post.responses['201'].headers).to.have.property('Location');
    });

    it('invoices, customers, schedules, generated invoices and organizations: Location reads back the resource', async () => {
      const created: { location: string | null; id: string; secret: string }[] = [];
      const invoice = await api.create({ customer_id: customer.id, issue_date: '2026-03-14', items: [line()] });
      created.push({ location: invoice.headers.get('location'), id: invoice.body.data.id, secret: api.secret });
      const cust = await call(`${server.url}/customers`, api.secret, { method: 'POST', body: { name: 'Hanout Ziz', type: 'b2c' } });
      created.push({ location: cust.headers.get('location'), id: cust.body.data.id, secret: api.secret });
      const schedule = await call(`${server.url}/recurring-invoices`, api.secret, { method: 'POST', body: { customer_id: customer.id, frequency: 'monthly', start_date: '2026-01-20', items: [line()] } });
      expect(schedule.status, JSON.stringify(schedule.body)).to.equal(201);
      created.push({ location: schedule.headers.get('location'), id: schedule.body.data.id, secret: api.secret });
      const generated = await call(`${server.url}/recurring-invoices/${schedule.body.data.id}/generate`, api.secret, { method: 'POST' });
      expect(generated.status, JSON.stringify(generated.body)).to.equal(201);
      created.push({ location: generated.headers.get('location'), id: generated.body.data.id, secret: api.secret });
      const account = await createKey(server.database.db, { accountId: api.tenant.accountId, scopes: ['organizations:read', 'organizations:write'] });
      const org = await call(`${server.url}/organizations`, account.secret, { method: 'POST', body: { legal_name: 'Atlas Nord SARL' } });
      expect(org.status, JSON.stringify(org.body)).to.equal(201);
      created.push({ location: org.headers.get('location'), id: org.body.data.id, secret: account.secret });

      expect(created.map((c) => c.location)).to.deep.equal([
        `/api/v1/invoices/${created[0].id}`,
        `/api/v1/customers/${created[1].id}`,
        `/api/v1/recurring-invoices/${created[2].id}`,
        `/api/v1/invoices/${created[3].id}`,
        `/api/v1/organizations/${created[4].id}`,
      ]);
      for (const c of created) {
        const read = await call(new URL(c.location!, server.root).href, c.secret);
        expect(read.status, c.location!).to.equal(200);
        expect(read.body.data.id).to.equal(c.id);
      }
    });

    it('an Idempotency-Key replay answers the same Location', async () => {
      const body = { customer_id: customer.id, issue_date: '2026-03-14', items: [line()] };
      const first = await api.create(body, { 'idempotency-key': 'location-replay-1' });
      const again = await api.create(body, { 'idempotency-key': 'location-replay-1' });
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.headers.get('location')).to.equal(first.headers.get('location')).and.to.equal(`/api/v1/invoices/${first.body.data.id}`);
    });
  });

  describe('405 Method Not Allowed', () => {
    it('a known path with a wrong method answers 405 with Allow, with no key needed', async () => {
      const put = await call(`${server.url}/invoices`, null, { method: 'PUT', body: {} });
      expect(put.status).to.equal(405);
      expect(put.headers.get('allow')).to.equal('GET, HEAD, OPTIONS, POST');
      expect(put.body.error.code).to.equal('METHOD_NOT_ALLOWED');
      expect(put.body.error.details.allowed).to.deep.equal(['GET', 'HEAD', 'OPTIONS', 'POST']);

      const del = await call(`${server.url}/invoices/0190b4a1-0000-7000-8000-000000000009`, api.secret, { method: 'DELETE' });
      expect(del.status).to.equal(405);
      expect(del.headers.get('allow')).to.equal('GET, HEAD, OPTIONS, PATCH');

      const get = await call(`${server.url}/invoices/0190b4a1-0000-7000-8000-000000000009/finalize`, api.secret);
      expect(get.status).to.equal(405);
      expect(get.headers.get('allow')).to.equal('OPTIONS, POST');

      const doc = await call(`${server.root}/openapi.json`, null, { method: 'POST' });
      expect(doc.status).to.equal(405);
      expect(doc.headers.get('allow')).to.equal('GET, HEAD, OPTIONS');
    });

    it('OPTIONS answers 204 with Allow; an unknown path is still 404; the right method still works', async () => {
      const options = await fetch(`${server.url}/customers/0190b4a1-0000-7000-8000-000000000009`, { method: 'OPTIONS' });
      expect(options.status).to.equal(204);
      expect(options.headers.get('allow')).to.equal('DELETE, GET, HEAD, OPTIONS, PATCH');
      const unknown = await call(`${server.url}/nothing-here`, api.secret, { method: 'PUT' });
      expect(unknown.status).to.equal(404);
      expect((await api.list()).status).to.equal(200);
    });
  });

  // X-RateLimit-* on every answer but a 401 (docs/api-decisions.md "Keys, plans and quotas"). These answers are given where no route ran.
  describe('rate-limit headers where no route ran', () => {
    it('an unknown path, a wrong method, OPTIONS, a path that does not decode and refused bodies carry the key\'s window, and count', async () => {
      const { key } = await createTenant(server.database.db);
      const auth = { authorization: `Bearer ${key.secret}` };
      const json = { ...auth, 'content-type': 'application/json' };
      const first = await raw(`${server.url}/customers`, { headers: auth });
      expect(first.status).to.equal(200);
      const answers = [
        await raw(`${server.url}/nothing-here`, { headers: auth }),
        await raw(`${server.url}/invoices`, { method: 'DELETE', headers: auth }),
        await raw(`${server.url}/invoices`, { method: 'OPTIONS', headers: auth }),
        await raw(`${server.url}/invoices/%ZZ`, { headers: auth }),
        await raw(`${server.url}/customers`, { method: 'POST', headers: json, body: `{"name":"${'a'.repeat(1024 * 1024)}"}` }),
        await raw(`${server.url}/customers`, { method: 'POST', headers: { ...json, 'content-encoding': 'gzip' }, body: 'not gzip' }),
      ];
      expect(answers.map((a) => a.status)).to.deep.equal([404, 405, 204, 404, 413, 400]);
      const before = Number(first.headers['x-ratelimit-remaining']);
      expect(answers.map((a) => a.headers['x-ratelimit-remaining'])).to.deep.equal([1, 2, 3, 4, 5, 6].map((n) => String(before - n)));
      expect(answers.map((a) => a.headers['x-ratelimit-limit'])).to.deep.equal(Array(6).fill('120'));
    });

    it('a key that does not authenticate gets 401 there too; a key over its limit 429; no key, the answer alone', async () => {
      const bad = await call(`${server.url}/nothing-here`, 'sk_test_not-a-key', { method: 'PUT' });
      expect(bad.status).to.equal(401);
      expect(bad.headers.get('www-authenticate')).to.equal('Bearer');
      expect(bad.headers.get('x-ratelimit-limit')).to.equal(null);

      const { key } = await createTenant(server.database.db, { account: { requestsPerMinute: 2 } });
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await call(`${server.url}/nothing-here`, key.secret)).status);
      const over = await call(`${server.url}/invoices`, key.secret, { method: 'DELETE' });
      expect([...statuses, over.status]).to.deep.equal([404, 404, 429, 429]);
      expect(over.headers.get('retry-after')).to.match(/^\d+$/);
      expect(over.body.error.code).to.equal('RATE_LIMIT_EXCEEDED');

      const anonymous = await call(`${server.url}/nothing-here`, null);
      expect(anonymous.status).to.equal(404);
      expect(anonymous.headers.get('x-ratelimit-limit')).to.equal(null);
    });
  });

  describe('If-Match', () => {
    it('a weak ETag is refused (RFC 9110 strong comparison) and changes nothing; the strong one works', async () => {
      const draft = await api.draft(customer.id);
      const weak = await api.patch(draft.id, { notes: 'weak' }, { 'if-match': `W/"${draft.version}"` });
      expect(weak.status).to.equal(400);
      expect(weak.body.error.code).to.equal('VALIDATION_ERROR');
      expect(weak.body.error.details.fields.map((f: any) => f.field)).to.deep.equal(['If-Match']);
      expect(weak.body.error.details.fields[0].message).to.match(/strong ETag/);
      expect((await api.get(draft.id)).body.data.notes).to.equal(null);
      const strong = await api.patch(draft.id, { notes: 'strong' }, { 'if-match': `"${draft.version}"` });
      expect(strong.status).to.equal(200);
      expect(strong.body.data.notes).to.equal('strong');
    });
  });

  describe('every field error in one answer', () => {
    it('an empty description no longer hides the other fields of an invoice (schema and domain rules together)', async () => {
      const res = await api.create({
        customer_id: '0190b4a1-0000-7000-8000-00000000000c',
        issue_date: '2026-03-14',
        currency: 'ZZZ',
        items: [{ description: '', quantity: 0, unit_price: '-1', tax_rate: 150 }, { description: 'Ok', quantity: '1.23456', unit_price: 10 }],
      });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      const fields = res.body.error.details.fields.map((f: any) => f.field);
      expect(fields).to.include.members(['items[0].description', 'items[0].quantity', 'items[0].unit_price', 'items[0].tax_rate', 'items[1].quantity', 'currency', 'customer_id']);
      expect(new Set(fields).size, 'one message per field').to.equal(fields.length);
    });

    it('the same for customers, updates, a bad If-Match and schedules', async () => {
      const cust = await call(`${server.url}/customers`, api.secret, { method: 'POST', body: { name: '', type: 'b2b', email: 'not-an-email', ice: '123' } });
      expect(cust.status).to.equal(400);
      expect(cust.body.error.details.fields.map((f: any) => f.field)).to.include.members(['name', 'email', 'ice']);

      const draft = await api.draft(customer.id);
      const patch = await api.patch(draft.id, { items: [{ description: '', quantity: -2, unit_price: 1 }] }, { 'if-match': 'W/"0"' });
      expect(patch.status).to.equal(400);
      expect(patch.body.error.details.fields.map((f: any) => f.field)).to.include.members(['items[0].description', 'items[0].quantity', 'If-Match']);

      const schedule = await call(`${server.url}/recurring-invoices`, api.secret, {
        method: 'POST',
        body: { customer_id: customer.id, frequency: 'monthly', start_date: '2026-01-20', auto_send: true, items: [{ description: '', quantity: 0, unit_price: 1 }] },
      });
      expect(schedule.status).to.equal(400);
      expect(schedule.body.error.details.fields.map((f: any) => f.field)).to.include.members(['items[0].description', 'items[0].quantity', 'auto_send']);
    });
  });

  describe('compression', () => {
    let bigList: string;
    before(async () => {
      // A customer of its own: the schedule of the shared customer (above, from January) makes the scheduler
      // generate invoices at its own ticks, which could land between two reads of an unfiltered list.
      const own = await api.customer();
      for (let i = 0; i < 4; i++) await api.draft(own.id, { notes: `Facture ${i} `.repeat(20) });
      bigList = `${server.url}/invoices?per_page=10&customer_id=${own.id}`;
    });

    it('large JSON answers are gzip or br as the client asks, and decode to the same bytes', async () => {
      const identity = await raw(bigList, { headers: { ...auth(), 'accept-encoding': 'identity' } });
      expect(identity.headers['content-encoding']).to.equal(undefined);
      // No Accept-Encoding at all: identity too, and the answer still says it varies with it (for caches).
      const unnamed = await raw(bigList, { headers: auth() });
      expect(unnamed.headers['content-encoding']).to.equal(undefined);
      expect(unnamed.headers.vary).to.match(/Accept-Encoding/i);
      expect(unnamed.body.equals(identity.body)).to.equal(true);
      expect(identity.body.length).to.be.greaterThan(2048);
      for (const encoding of ['gzip', 'br']) {
        const res = await raw(bigList, { headers: { ...auth(), 'accept-encoding': encoding } });
        expect(res.status).to.equal(200);
        expect(res.headers['content-encoding']).to.equal(encoding);
        expect(res.headers.vary).to.match(/Accept-Encoding/i);
        expect(res.wire.length).to.be.lessThan(identity.body.length);
        expect(res.body.equals(identity.body), encoding).to.equal(true);
      }
    });

    it('small answers go uncompressed', async () => {
      const res = await raw(`${server.url}/invoices/0190b4a1-0000-7000-8000-000000000009`, { headers: { ...auth(), 'accept-encoding': 'gzip, br' } });
      expect(res.status).to.equal(404);
      expect(res.headers['content-encoding']).to.equal(undefined);
    });

    it('an Idempotent-Replayed answer decodes to the very bytes of the first one', async () => {
      const body = JSON.stringify({ customer_id: customer.id, issue_date: '2026-03-14', notes: 'Replay '.repeat(400), items: [line(), line('Audit', 1, 300)] });
      const headers = { ...auth(), 'content-type': 'application/json', 'idempotency-key': 'compressed-replay-1', 'accept-encoding': 'gzip' };
      const first = await raw(`${server.url}/invoices`, { method: 'POST', headers, body });
      const replay = await raw(`${server.url}/invoices`, { method: 'POST', headers: { ...headers, 'accept-encoding': 'br' }, body });
      expect(first.status).to.equal(201);
      expect(replay.status).to.equal(201);
      expect(first.headers['content-encoding']).to.equal('gzip');
      expect(replay.headers['content-encoding']).to.equal('br');
      expect(replay.headers['idempotent-replayed']).to.equal('true');
      expect(replay.body.equals(first.body)).to.equal(true);
      expect(replay.headers.etag).to.equal(first.headers.etag);
    });

    it('XML decodes to the same document; a PDF is sent as it is', async () => {
      const invoice = await api.finalized(customer.id, { items: [line(), line('Audit', 1, 300), line('Formation', 3, 150, 10)] });
      const url = `${server.url}/invoices/${invoice.id}`;
      const plain = await raw(`${url}/xml`, { headers: { ...auth(), 'accept-encoding': 'identity' } });
      const gzip = await raw(`${url}/xml`, { headers: { ...auth(), 'accept-encoding': 'gzip' } });
      expect(plain.status).to.equal(200);
      expect(plain.body.length).to.be.greaterThan(2048);
      expect(gzip.headers['content-encoding']).to.equal('gzip');
      expect(gzip.headers['content-type']).to.equal('application/xml; charset=utf-8');
      expect(gzip.body.equals(plain.body)).to.equal(true);

      const pdf = await raw(`${url}/pdf`, { headers: { ...auth(), 'accept-encoding': 'gzip, br' } });
      expect(pdf.status).to.equal(200);
      expect(pdf.headers['content-encoding']).to.equal(undefined);
      expect(Number(pdf.headers['content-length'])).to.equal(pdf.wire.length);
      expect(pdf.body.subarray(0, 5).toString('latin1')).to.equal('%PDF-');
    });
  });

  describe('paid_at', () => {
    it('more than 5 minutes in the future is a VALIDATION_ERROR; within the clock-skew margin or past, it is taken', async () => {
      const invoice = await api.finalized(customer.id);
      const future = new Date(Date.now() + 10 * 60_000).toISOString();
      const refused = await api.action(invoice.id, 'pay', { paid_at: future });
      expect(refused.status).to.equal(400);
      expect(refused.body.error.code).to.equal('VALIDATION_ERROR');
      expect(refused.body.error.details.fields).to.deep.equal([{ field: 'paid_at', message: 'must not be more than 5 minutes in the future' }]);
      expect((await api.get(invoice.id)).body.data.status).to.equal('finalized');

      const skewed = new Date(Date.now() + 60_000).toISOString();
      const paid = await api.action(invoice.id, 'pay', { paid_at: skewed });
      expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
      expect(paid.body.data.paid_at).to.equal(skewed);

      const other = await api.finalized(customer.id);
      const past = await api.action(other.id, 'pay', { paid_at: '2026-03-15T09:30:00+01:00' });
      expect(past.status).to.equal(200);
      expect(past.body.data.paid_at).to.equal('2026-03-15T08:30:00.000Z');
    });
  });

  describe('Link header on lists', () => {
    it('first, prev, next and last keep the filters; meta.pagination is unchanged', async () => {
      const tenant = await invoicesClient(server);
      for (let i = 0; i < 5; i++) await tenant.customer({ name: `Client ${i}` });
      await tenant.customer({ name: 'Particulier', type: 'b2c', ice: null });
      const page2 = await call(`${server.url}/customers?type=b2b&per_page=2&page=2`, tenant.secret);
      expect(page2.status).to.equal(200);
      expect(page2.body.meta).to.deep.equal({ pagination: { total: 5, page: 2, perPage: 2, totalPages: 3 } });
      const link = page2.headers.get('link');
      expect(link).to.equal(
        '</api/v1/customers?type=b2b&per_page=2&page=1>; rel="first", ' +
          '</api/v1/customers?type=b2b&per_page=2&page=1>; rel="prev", ' +
          '</api/v1/customers?type=b2b&per_page=2&page=3>; rel="next", ' +
          '</api/v1/customers?type=b2b&per_page=2&page=3>; rel="last"',
      );
      const next = /<([^>]+)>; rel="next"/.exec(link!)![1];
      const page3 = await call(new URL(next, server.root).href, tenant.secret);
      expect(page3.body.data).to.have.length(1);
      expect(page3.headers.get('link')).to.not.contain('rel="next"');

      const first = await call(`${server.url}/customers`, tenant.secret);
      expect(first.headers.get('link')).to.equal('</api/v1/customers?page=1&per_page=20>; rel="first", </api/v1/customers?page=1&per_page=20>; rel="last"');
    });
  });
});
