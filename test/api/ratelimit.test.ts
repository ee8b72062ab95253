/**
 * Rate limit (CONTRACT section 8): one fixed window per key shared by every
 * API process, since the counters live in PostgreSQL.
 */
import { expect } from 'chai';
import { call, createTenant } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { withTestRoutes } from '../support/test-routes.ts';

describe('API pipeline: rate limit across two API processes', () => {
  let a: TestServer;
  let b: TestServer;

  before(async () => {
    a = await startTestServer({ roles: ['api'], routes: withTestRoutes });
    b = await startTestServer({ roles: ['api'], database: a.database, routes: withTestRoutes });
  });
  after(async () => {
    await b?.stop();
    await a?.stop();
  });

  it('the 121st request of a professional key within a minute gets 429 with Retry-After', async () => {
    const t = await createTenant(a.database.db, { plan: 'professional' });
    for (let i = 0; i < 120; i++) {
      const server = i % 2 === 0 ? a : b;
      const res = await call(`${server.url}/_test/echo`, t.key.secret);
      expect(res.status, `request ${i + 1}`).to.equal(200);
      expect(res.headers.get('x-ratelimit-limit')).to.equal('120');
      expect(res.headers.get('x-ratelimit-remaining')).to.equal(String(119 - i));
    }
    const res = await call(`${b.url}/_test/echo`, t.key.secret);
    expect(res.status).to.equal(429);
    expect(res.body.error.code).to.equal('RATE_LIMIT_EXCEEDED');
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).to.be.within(1, 60);
    expect(res.headers.get('x-ratelimit-remaining')).to.equal('0');
    expect(Number(res.headers.get('x-ratelimit-reset'))).to.be.within(Date.now() / 1000, Date.now() / 1000 + 61);
    // Another key of the same organization has its own window.
    const other = await createTenant(a.database.db, { plan: 'professional' });
    expect((await call(`${a.url}/_test/echo`, other.key.secret)).status).to.equal(200);
  });

  it('a scope refusal outranks the rate limit but still counts and carries the headers', async () => {
    const t = await createTenant(a.database.db, { plan: 'professional', account: { requestsPerMinute: 2 }, scopes: ['organization:read'] });
    await call(`${a.url}/_test/echo`, t.key.secret);
    await call(`${b.url}/_test/echo`, t.key.secret);
    const limited = await call(`${a.url}/_test/echo`, t.key.secret);
    expect(limited.status).to.equal(429);
    const forbidden = await call(`${b.url}/_test/file`, t.key.secret); // needs invoices:export
    expect(forbidden.status).to.equal(403);
    expect(forbidden.body.error.details).to.deep.equal({ required_scopes: ['invoices:export'] });
    expect(forbidden.headers.get('x-ratelimit-limit')).to.equal('2');
    expect(forbidden.headers.get('x-ratelimit-remaining')).to.equal('0');
    expect(forbidden.headers.get('retry-after')).to.equal(null);
  });
});
