/** Idempotency-Key (CONTRACT section 13) over real HTTP. */
import { expect } from 'chai';
import { call, createKey, createTenant, type Tenant } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { calls, withTestRoutes } from '../support/test-routes.ts';

describe('API pipeline: Idempotency-Key', () => {
  let server: TestServer;
  let tenant: Tenant;
  let n = 0;
  const things = () => `${server.url}/_test/things`;
  const post = (key: string | null, body: unknown, secret = tenant.key.secret) =>
    call(things(), secret, { method: 'POST', body, headers: key ? { 'idempotency-key': key } : {} });
  const freshKey = () => `idem-${process.pid}-${++n}`;

  before(async () => {
    server = await startTestServer({ roles: ['api'], routes: withTestRoutes });
    tenant = await createTenant(server.database.db, { plan: 'fiduciaire' });
  });
  after(() => server?.stop());

  it('replays the first response (status, body, ETag) without running again', async () => {
    const key = freshKey();
    const before = calls.things;
    const first = await post(key, { name: 'a' });
    expect(first.status).to.equal(201);
    const second = await post(key, { name: 'a' });
    expect(calls.things).to.equal(before + 1);
    expect(second.status).to.equal(201);
    expect(second.body).to.deep.equal(first.body);
    expect(second.headers.get('etag')).to.equal(first.headers.get('etag'));
    expect(second.headers.get('idempotent-replayed')).to.equal('true');
    expect(second.headers.get('x-ratelimit-remaining')).to.match(/^\d+$/);
  });

  it('409 IDEMPOTENCY_KEY_REUSED with a different body', async () => {
    const key = freshKey();
    await post(key, { name: 'a' });
    const res = await post(key, { name: 'b' });
    expect(res.status).to.equal(409);
    expect(res.body.error.code).to.equal('IDEMPOTENCY_KEY_REUSED');
  });

  it('is scoped to the API key', async () => {
    const key = freshKey();
    const other = await createKey(server.database.db, { accountId: tenant.accountId, organizationId: tenant.organizationId });
    const a = await post(key, { name: 'a' });
    const b = await post(key, { name: 'a' }, other.secret);
    expect(b.body.data.n).to.not.equal(a.body.data.n);
  });

  it('runs concurrent duplicates once', async () => {
    const key = freshKey();
    const before = calls.things;
    const results = await Promise.all(Array.from({ length: 8 }, () => post(key, { name: 'c', delay_ms: 300 })));
    expect(calls.things).to.equal(before + 1);
    for (const r of results) {
      expect(r.status).to.equal(201);
      expect(r.body).to.deep.equal(results[0].body);
    }
  });

  it('stores 4xx answers of the handler and replays them', async () => {
    const key = freshKey();
    const before = calls.things;
    const first = await post(key, { name: 'd', fail: 'domain' });
    expect(first.status).to.equal(409);
    const second = await post(key, { name: 'd', fail: 'domain' });
    expect(second.status).to.equal(409);
    expect(second.body).to.deep.equal(first.body);
    expect(calls.things).to.equal(before + 1);
  });

  it('does not store 5xx answers: a retry runs again, with the same seed; another body is refused', async () => {
    const key = freshKey();
    const before = calls.things;
    const row = async () =>
      (await server.database.db.selectFrom('idempotency_keys').select(['seed', 'completed']).where('idempotency_key', '=', key).executeTakeFirstOrThrow());
    expect((await post(key, { name: 'e', fail: 'crash' })).status).to.equal(500);
    const kept = await row();
    expect(kept.completed).to.equal(false);
    expect((await post(key, { name: 'e', fail: 'crash' })).status).to.equal(500);
    expect(calls.things).to.equal(before + 2);
    expect((await row()).seed, 'the retry took the claim over with its seed').to.equal(kept.seed);
    expect((await post(key, { name: 'another' })).body.error.code).to.equal('IDEMPOTENCY_KEY_REUSED');
  });

  it('does not store validation errors (they happen before the key is taken)', async () => {
    const key = freshKey();
    expect((await post(key, {})).status).to.equal(400);
    expect((await post(key, { name: 'f' })).status).to.equal(201);
  });

  it('takes over a key whose owner died (lease over) and expires keys after 24 h', async () => {
    const key = freshKey();
    await post(key, { name: 'g' });
    await server.database.db
      .updateTable('idempotency_keys')
      .set({ created_at: new Date(Date.now() - 25 * 3600_000) })
      .where('idempotency_key', '=', key)
      .execute();
    const after24h = await post(key, { name: 'other body' });
    expect(after24h.status).to.equal(201);
    // An owner that died mid-request: claimed, no response, lease over. The same request takes it
    // over and runs again; another body may not (the key was used for something else).
    const dead = freshKey();
    await post(dead, { name: 'h' });
    await server.database.db
      .updateTable('idempotency_keys')
      .set({ completed: false, response_status: null, response_body: null, response_headers: null, locked_until: new Date(Date.now() - 1000) })
      .where('idempotency_key', '=', dead)
      .execute();
    expect((await post(dead, { name: 'other' })).body.error.code).to.equal('IDEMPOTENCY_KEY_REUSED');
    const before = calls.things;
    const retried = await post(dead, { name: 'h' });
    expect(retried.status).to.equal(201);
    expect(retried.headers.get('idempotent-replayed')).to.equal(null);
    expect(calls.things).to.equal(before + 1);
  });

  it('rejects a malformed Idempotency-Key', async () => {
    const res = await post('x'.repeat(256), { name: 'i' });
    expect(res.body.error.details.fields).to.deep.equal([{ field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }]);
  });
});
