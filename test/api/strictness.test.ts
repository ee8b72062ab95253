/**
 * The wrong answers an adversarial test found (docs/reliability.md), each
 * over real HTTP: bodies in another charset or not UTF-8, numeric query
 * values that are not plain decimal integers, idempotent replays in other
 * bytes, paths matched case-insensitively, duplicate Host headers, valid ISO
 * 4217 codes refused, and unauthenticated floods not limited.
 */
import { connect } from 'node:net';
import { expect } from 'chai';
import { sql } from 'kysely';
import { startTestServer, type TestServer } from '../support/server.ts';
import { revokeKey } from '../../src/accounts/keys.ts';
import { call, createKey } from '../support/fixtures.ts';
import { invoicesClient, type InvoicesClient } from '../invoices/support.ts';

/** A raw HTTP request (fetch would normalise what these tests send on purpose). */
function raw(port: number, lines: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const conn = connect(port, '127.0.0.1', () => conn.write(`${lines.join('\r\n')}\r\nConnection: close\r\n\r\n`));
    let data = '';
    conn.on('data', (d) => (data += d));
    conn.on('error', reject);
    conn.on('end', () => {
      const [head, ...rest] = data.split('\r\n\r\n');
      let body = rest.join('\r\n\r\n');
      // Chunked: take the first chunk (these answers are small).
      if (/transfer-encoding: chunked/i.test(head)) body = body.split('\r\n')[1] ?? '';
      resolve({ status: Number(head.split(' ')[1]), body });
    });
  });
}

describe('API strictness: the adversarial test’s wrong answers', function () {
  this.timeout(120_000);
  let server: TestServer;
  let api: InvoicesClient;
  let customer: any;
  let port: number;

  before(async () => {
    server = await startTestServer({ env: { UNAUTHENTICATED_REQUESTS_PER_MINUTE: '20' } });
    port = Number(new URL(server.url).port);
    api = await invoicesClient(server);
    customer = await api.customer();
  });
  after(() => server?.stop());

  const postCustomer = (body: Buffer | string, contentType: string) =>
    fetch(`${server.url}/customers`, { method: 'POST', headers: { authorization: `Bearer ${api.secret}`, 'content-type': contentType }, body: typeof body === 'string' ? body : new Uint8Array(body) });

  describe('request body encoding', () => {
    for (const charset of ['iso-8859-1', 'utf-16', 'windows-1252', '"latin1"']) {
      it(`charset=${charset}: 415 UNSUPPORTED_MEDIA_TYPE, nothing stored`, async () => {
        const res = await postCustomer(Buffer.from('{"name":"Caf\xe9 Atlas","type":"b2c"}', 'latin1'), `application/json; charset=${charset}`);
        expect(res.status).to.equal(415);
        expect((await res.json()).error.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
      });
    }

    it('charset=UTF-8 (any case) is accepted and stored as sent', async () => {
      const res = await postCustomer(Buffer.from('{"name":"Café Atlas ☕","type":"b2c"}', 'utf8'), 'application/json; Charset="UTF-8"');
      expect(res.status).to.equal(201);
      expect((await res.json()).data.name).to.equal('Café Atlas ☕');
    });

    it('bytes that are not UTF-8: 400 INVALID_JSON, and no replacement character is ever stored', async () => {
      for (const bytes of [Buffer.from('{"name":"Caf\xe9","type":"b2c"}', 'latin1'), Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]), Buffer.from('{"name":"\xed\xa0\x80","type":"b2c"}', 'latin1')]) {
        const res = await postCustomer(bytes, 'application/json');
        expect(res.status).to.equal(400);
        const body = await res.json();
        expect(body.error.code).to.equal('INVALID_JSON');
        expect(body.error.details.fields).to.deep.equal([{ field: 'body', message: 'must be encoded as UTF-8' }]);
      }
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from customers where name like ${'%\uFFFD%'}`.execute(server.database.db);
      expect(rows[0].n).to.equal(0);
      const events = await sql<{ n: number }>`select count(*)::int as n from es_events where data::text like ${'%\uFFFD%'}`.execute(server.database.db);
      expect(events.rows[0].n).to.equal(0);
    });
  });

  describe('numeric query values', () => {
    for (const value of ['0x10', '%205', '5%20', '1e1', '0b1', '+5', '5.0', '']) {
      it(`per_page=${value}: VALIDATION_ERROR on per_page`, async () => {
        const res = await call(`${server.url}/invoices?per_page=${value}`, api.secret);
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body.error.details.fields.map((f: any) => f.field)).to.deep.equal(['per_page']);
      });
    }
    it('plain decimal digits are accepted (page=2&per_page=05)', async () => {
      const res = await call(`${server.url}/invoices?page=2&per_page=05`, api.secret);
      expect(res.status).to.equal(200);
      expect(res.body.meta.pagination).to.include({ page: 2, perPage: 5 });
    });
  });

  it('an idempotent replay answers the stored bytes exactly', async () => {
    const key = `replay-${Date.now()}`;
    const send = () =>
      fetch(`${server.url}/invoices`, {
        method: 'POST',
        headers: { authorization: `Bearer ${api.secret}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ customer_id: customer.id, issue_date: '2026-03-14', items: [{ description: 'Conseil', quantity: 2, unit_price: 500 }], notes: 'zèbre' }),
      });
    const first = await send();
    const firstBytes = Buffer.from(await first.arrayBuffer());
    const second = await send();
    const secondBytes = Buffer.from(await second.arrayBuffer());
    expect(first.status).to.equal(201);
    expect(second.status).to.equal(201);
    expect(second.headers.get('idempotent-replayed')).to.equal('true');
    expect(second.headers.get('content-type')).to.equal(first.headers.get('content-type'));
    expect(secondBytes.equals(firstBytes), `replay:\n${secondBytes}\nfirst:\n${firstBytes}`).to.equal(true);
  });

  describe('paths and Host', () => {
    for (const path of ['/API/v1/invoices', '/api/V1/invoices', '/api/v1/Invoices', '/api/v1/INVOICES', '/Readyz', '/HEALTHZ']) {
      it(`${path}: 404 (paths are case-sensitive)`, async () => {
        const res = await call(`${server.root}${path}`, api.secret);
        expect(res.status).to.equal(404);
        expect(res.body.error.code).to.equal('NOT_FOUND');
      });
    }

    for (const path of ['/invoices/%ZZ', '/customers/%C3%28', '/invoices/%E0%A4%A/finalize', '/organizations/%ZZ']) {
      it(`${path}: 404 NOT_FOUND (percent-encoding that does not decode names no resource), with and without a key`, async () => {
        for (const secret of [api.secret, null]) {
          const res = await call(`${server.url}${path}`, secret, path.endsWith('finalize') ? { method: 'POST' } : {});
          expect(res.status, `${secret ? 'with' : 'without'} a key`).to.equal(404);
          expect(res.body.error.code).to.equal('NOT_FOUND');
        }
      });
    }

    it('two Host headers: 400, before authentication', async () => {
      const res = await raw(port, ['GET /api/v1/invoices HTTP/1.1', 'Host: 127.0.0.1', 'Host: evil.example', `Authorization: Bearer ${api.secret}`]);
      expect(res.status).to.equal(400);
      expect(JSON.parse(res.body).error.details.fields).to.deep.equal([{ field: 'Host', message: 'must be sent exactly once' }]);
      const once = await raw(port, ['GET /api/v1/invoices HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${api.secret}`]);
      expect(once.status).to.equal(200);
    });
  });

  describe('currencies: the current ISO 4217 list with its minor units', () => {
    for (const [currency, total] of [['CLF', '1200.0000'], ['XCG', '1200.00'], ['JPY', '1200'], ['KWD', '1200.000'], ['HUF', '1200.00'], ['IQD', '1200.000']] as const) {
      it(`${currency} is accepted; amounts carry its ISO minor units`, async () => {
        const res = await api.create({ customer_id: customer.id, currency, issue_date: '2026-03-14', items: [{ description: 'Conseil', quantity: 2, unit_price: 500, tax_rate: 20 }] });
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        expect(res.body.data.currency).to.equal(currency);
        expect(res.body.data.total).to.equal(total);
      });
    }
    for (const currency of ['HRK', 'QQQ', 'mad', 'EURO']) {
      it(`${currency} is refused on currency`, async () => {
        const res = await api.create({ customer_id: customer.id, currency, issue_date: '2026-03-14', items: [{ description: 'Conseil', quantity: 2, unit_price: 500 }] });
        expect(res.status).to.equal(400);
        expect(res.body.error.details.fields.map((f: any) => f.field)).to.include('currency');
      });
    }
  });

  describe('unauthenticated requests (last: the address stays blocked for a minute)', () => {
    it('requests without a valid key are rate-limited per client address (429 + Retry-After), valid keys of others are not counted; a key already at work passes', async () => {
      // The server allows 20 per minute per address here (UNAUTHENTICATED_REQUESTS_PER_MINUTE).
      const known = await createKey(server.database.db, { accountId: api.tenant.accountId, organizationId: api.tenant.organizationId });
      expect((await call(`${server.url}/invoices`, known.secret)).status).to.equal(200);
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) {
        const secret = i % 2 ? `svc_test_${'x'.repeat(43)}` : null;
        statuses.push((await call(`${server.url}/invoices`, secret)).status);
      }
      expect(statuses).to.deep.equal(Array(20).fill(401));
      const over = await call(`${server.url}/invoices`, `svc_test_${'y'.repeat(43)}`);
      expect(over.status).to.equal(429);
      expect(over.body.error.code).to.equal('RATE_LIMIT_EXCEEDED');
      expect(Number(over.headers.get('retry-after'))).to.be.within(1, 60);
      expect((await call(`${server.url}/invoices`, null)).status).to.equal(429);
      // A key already at work from that address (behind a proxy, every client shares it) goes on; one that was
      // never seen waits with the flood, as a guess does.
      expect((await call(`${server.url}/invoices`, api.secret)).status).to.equal(200);
      const fresh = await createKey(server.database.db, { accountId: api.tenant.accountId, organizationId: api.tenant.organizationId });
      expect((await call(`${server.url}/invoices`, fresh.secret)).status).to.equal(429);
      // A known key revoked since gets its 401 once, then waits like any other: no query per request.
      await revokeKey(server.database.db, known.id);
      expect((await call(`${server.url}/invoices`, known.secret)).status).to.equal(401);
      expect((await call(`${server.url}/invoices`, known.secret)).status).to.equal(429);
    });
  });
});
