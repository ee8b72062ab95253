/** Validation, bodies, replies and errors of the pipeline, over real HTTP. */
import http from 'node:http';
import { expect } from 'chai';
import { call, createTenant, type Tenant } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { withTestRoutes } from '../support/test-routes.ts';

describe('API pipeline: validation, replies, errors', () => {
  let server: TestServer;
  let tenant: Tenant;
  const things = () => `${server.url}/_test/things`;

  before(async () => {
    server = await startTestServer({ roles: ['api'], routes: withTestRoutes });
    tenant = await createTenant(server.database.db, { plan: 'fiduciaire' });
  });
  after(() => server?.stop());

  it('answers the success envelope with pagination, coerced query and defaults', async () => {
    const res = await call(`${server.url}/_test/echo?page=2&status=paid`, tenant.key.secret);
    expect(res.status).to.equal(200);
    expect(res.body.success).to.equal(true);
    expect(res.body.data.query).to.deep.equal({ page: 2, per_page: 20, status: 'paid' });
    expect(res.body.meta.pagination).to.deep.equal({ total: 0, page: 2, perPage: 20, totalPages: 0 });
    expect(res.headers.get('x-ratelimit-limit')).to.equal('300');
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    expect(reset).to.be.within(Date.now() / 1000, Date.now() / 1000 + 61);
  });

  it('builds event metadata from the request', async () => {
    const res = await call(`${server.url}/_test/echo`, tenant.key.secret, { headers: { 'x-correlation-id': 'corr-1', 'x-request-id': 'req-1' } });
    const m = res.body.data.metadata;
    expect(m).to.include({ organization_id: tenant.organizationId, actor: tenant.key.id, request_id: 'req-1', correlation_id: 'corr-1', causation_id: null });
    expect(m.occurred_at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('rejects malformed query values and unknown query parameters', async () => {
    const res = await call(`${server.url}/_test/echo?per_page=abc&status=gone&date_from=2026-13-01&foo=1`, tenant.key.secret);
    expect(res.status).to.equal(400);
    expect(res.body.error.code).to.equal('VALIDATION_ERROR');
    const fields = Object.fromEntries(res.body.error.details.fields.map((f: any) => [f.field, f.message]));
    expect(fields).to.deep.equal({
      per_page: 'must be an integer',
      status: 'must be one of: draft, paid',
      date_from: 'must be a valid date (YYYY-MM-DD)',
      foo: 'is not allowed',
    });
    const range = await call(`${server.url}/_test/echo?per_page=101`, tenant.key.secret);
    expect(range.body.error.details.fields).to.deep.equal([{ field: 'per_page', message: 'must be less than or equal to 100' }]);
  });

  it('names body fields with readable paths', async () => {
    const res = await call(things(), tenant.key.secret, {
      method: 'POST',
      body: { items: [{ quantity: 1 }, { quantity: 0, colour: 'red' }, {}], nmae: 'x' },
    });
    expect(res.status).to.equal(400);
    expect(res.body.error.details.fields).to.have.deep.members([
      { field: 'name', message: 'is required' },
      { field: 'nmae', message: 'is not allowed' },
      { field: 'items[1].quantity', message: 'must be greater than 0' },
      { field: 'items[1].colour', message: 'is not allowed' },
      { field: 'items[2].quantity', message: 'is required' },
    ]);
  });

  it('INVALID_JSON, 415 and a non-object body', async () => {
    const bad = await call(things(), tenant.key.secret, { method: 'POST', body: '{"name": ' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.code).to.equal('INVALID_JSON');
    expect(bad.body.error.details.fields[0].field).to.equal('body');
    const text = await call(things(), tenant.key.secret, { method: 'POST', body: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect(text.status).to.equal(415);
    expect(text.body.error.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
    const array = await call(things(), tenant.key.secret, { method: 'POST', body: [1] });
    expect(array.body.error.details.fields).to.deep.equal([{ field: 'body', message: 'must be an object' }]);
  });

  it('a name twice in one object is INVALID_JSON (JSON.parse would keep the last one silently)', async () => {
    for (const [body, name] of [
      ['{"name": "a", "name": "b"}', 'name'],
      ['{"name": "a", "items": [{"quantity": 1, "\\u0071uantity": 1000}]}', 'quantity'],
    ]) {
      const twice = await call(things(), tenant.key.secret, { method: 'POST', body });
      expect(twice.status, body).to.equal(400);
      expect(twice.body.error.code).to.equal('INVALID_JSON');
      expect(twice.body.error.details.fields).to.deep.equal([{ field: 'body', message: `has the name "${name}" twice in one object` }]);
    }
    // The same name in two objects, or inside a string, is no duplicate.
    const fine = await call(things(), tenant.key.secret, { method: 'POST', body: '{"name": "\\"name\\": 1", "items": [{"quantity": 1}, {"quantity": 2}]}' });
    expect(fine.status, JSON.stringify(fine.body)).to.equal(201);
    expect(fine.body.data.name).to.equal('"name": 1');
  });

  it('refuses what no route could store: NUL characters, numbers beyond 2^53; unreadable bodies are 400', async () => {
    const nul = await call(things(), tenant.key.secret, { method: 'POST', body: '{"name": "a\\u0000b"}' });
    expect(nul.body.error.details.fields).to.deep.equal([{ field: 'name', message: 'must not contain control characters (other than tab and line breaks) or invalid Unicode' }]);
    const query = await call(`${server.url}/_test/echo?page=99999999999999999999`, tenant.key.secret);
    expect(query.body.error.details.fields).to.deep.equal([{ field: 'page', message: 'is too large' }]);
    const huge = await call(things(), tenant.key.secret, { method: 'POST', body: '{"name": "a", "items": [{"quantity": 1e30}]}' });
    expect(huge.body.error.details.fields).to.deep.equal([{ field: 'items[0].quantity', message: 'is too large' }]);
    const gzip = await call(things(), tenant.key.secret, { method: 'POST', body: '{"name": "a"}', headers: { 'content-encoding': 'gzip' } });
    expect(gzip.status).to.equal(400);
    expect(gzip.body.error.code).to.equal('INVALID_JSON');
  });

  it('413 PAYLOAD_TOO_LARGE over 1 MiB', async () => {
    const res = await call(things(), tenant.key.secret, { method: 'POST', body: { name: 'x'.repeat(1024 * 1024 + 10) } });
    expect(res.status).to.equal(413);
    expect(res.body.error.code).to.equal('PAYLOAD_TOO_LARGE');
  });

  it('a route without a body schema refuses body fields', async () => {
    const id = '0190b4a1-0000-7000-8000-000000000001';
    const ok = await call(`${things()}/${id}/touch`, tenant.key.secret, { method: 'POST' });
    expect(ok.status).to.equal(200);
    expect(ok.body.data).to.deep.equal({ id, body: null, if_match: null });
    const res = await call(`${things()}/${id}/touch`, tenant.key.secret, { method: 'POST', body: { x: 1 } });
    expect(res.body.error.details.fields).to.deep.equal([{ field: 'x', message: 'is not allowed' }]);
  });

  it('ignores a body sent with a GET', async () => {
    // fetch refuses a GET body, so plain http.
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${server.url}/_test/echo`, {
        method: 'GET',
        headers: { authorization: `Bearer ${tenant.key.secret}`, 'content-type': 'text/plain', 'content-length': '8' },
      }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end('not json');
    });
    expect(status).to.equal(200);
  });

  it('404 for a non-UUID id and for an unknown route', async () => {
    const res = await call(`${things()}/12345`, tenant.key.secret);
    expect(res.status).to.equal(404);
    expect(res.body.error.code).to.equal('NOT_FOUND');
    const none = await call(`${server.url}/nothing-here`, tenant.key.secret);
    expect(none.status).to.equal(404);
    expect(none.body.error.code).to.equal('NOT_FOUND');
  });

  it('ETag from the version; If-Match parsed with or without quotes; a weak W/ tag is a VALIDATION_ERROR', async () => {
    const id = '0190b4a1-0000-7000-8000-000000000002';
    const read = await call(`${things()}/${id}`, tenant.key.secret);
    expect(read.headers.get('etag')).to.equal('"1"');
    for (const header of ['"7"', '7']) {
      const res = await call(`${things()}/${id}/touch`, tenant.key.secret, { method: 'POST', headers: { 'if-match': header } });
      expect(res.body.data.if_match).to.equal(7);
    }
    const bad = await call(`${things()}/${id}/touch`, tenant.key.secret, { method: 'POST', headers: { 'if-match': '"abc"' } });
    expect(bad.body.error.details.fields[0].field).to.equal('If-Match');
    const weak = await call(`${things()}/${id}/touch`, tenant.key.secret, { method: 'POST', headers: { 'if-match': 'W/"7"' } });
    expect(weak.status).to.equal(400);
    expect(weak.body.error.code).to.equal('VALIDATION_ERROR');
    expect(weak.body.error.details.fields).to.deep.equal([
      { field: 'If-Match', message: 'must be a strong ETag such as "3": a weak ETag (W/...) never matches (RFC 9110 strong comparison)' },
    ]);
  });

  it('file replies are raw attachments', async () => {
    const res = await fetch(`${server.url}/_test/file`, { headers: { authorization: `Bearer ${tenant.key.secret}` } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/xml; charset=utf-8');
    expect(res.headers.get('content-disposition')).to.equal('attachment; filename="INV-2026-000001.xml"');
    expect(await res.text()).to.equal('<Invoice/>');
  });

  it('500 leaks nothing but the request id', async () => {
    const res = await call(`${server.url}/_test/boom`, tenant.key.secret);
    expect(res.status).to.equal(500);
    expect(res.body.error.code).to.equal('INTERNAL_ERROR');
    const requestId = res.headers.get('x-request-id');
    expect(res.body.error.details).to.deep.equal({ request_id: requestId });
    expect(JSON.stringify(res.body)).not.to.match(/secret_table|select|stack|at /i);
  });
});
