/**
 * The scope matrix, generated from the process's routes so it covers every route added
 * later: a key lacking a route's scope gets 403 FORBIDDEN naming exactly that
 * scope; a key holding only that scope gets past the scope check.
 */
import { expect } from 'chai';
import { ALL_SCOPES } from '../../src/accounts/scopes.ts';
import type { RouteSpec } from '../../src/api/route.ts';
import { call, createAccount, createKey, insertOrganizationRow } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { withTestRoutes } from '../support/test-routes.ts';

const SOME_ID = '0190b4a1-0000-7000-8000-00000000abcd';

function urlOf(base: string, spec: RouteSpec): string {
  return base + spec.path.replace(/:([A-Za-z_]\w*)/g, SOME_ID);
}

describe('API pipeline: scope matrix over every route', () => {
  let server: TestServer;
  let accountId: string;
  let organizationId: string;
  const routes = withTestRoutes;

  before(async () => {
    server = await startTestServer({ routes: withTestRoutes });
    accountId = await createAccount(server.database.db, 'fiduciaire');
    organizationId = await insertOrganizationRow(server.database.db, accountId);
  });
  after(() => server?.stop());

  function request(spec: RouteSpec, scopes: RouteSpec['scope'][]) {
    return async () => {
      const org = spec.audience === 'organization' ? organizationId : null;
      const key = await createKey(server.database.db, { accountId, organizationId: org, scopes });
      return call(urlOf(server.url, spec), key.secret, {
        method: spec.method.toUpperCase(),
        body: spec.method === 'get' || spec.method === 'delete' ? undefined : {},
      });
    };
  }

  it('has routes to check', () => {
    expect(routes.length).to.be.greaterThan(0);
  });

  for (const spec of routes) {
    const name = `${spec.method.toUpperCase()} ${spec.path} (${spec.scope})`;

    it(`${name}: 403 with exactly [scope] without it`, async () => {
      const res = await request(spec, ALL_SCOPES.filter((s) => s !== spec.scope))();
      expect(res.status, JSON.stringify(res.body)).to.equal(403);
      expect(res.body.error.code).to.equal('FORBIDDEN');
      expect(res.body.error.details).to.deep.equal({ required_scopes: [spec.scope] });
    });

    it(`${name}: passes the scope check with only it`, async () => {
      const res = await request(spec, [spec.scope])();
      expect(res.status, JSON.stringify(res.body)).to.not.equal(401);
      expect(res.status === 403 && res.body?.error?.code === 'FORBIDDEN', JSON.stringify(res.body)).to.equal(false);
      if (spec.path !== '/_test/boom') expect(res.status, JSON.stringify(res.body)).to.be.below(500);
    });
  }
});
