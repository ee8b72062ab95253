/** The OpenAPI document covers exactly the mounted routes and describes the pipeline. */
import { expect } from 'chai';
import { openapiPath } from '../../src/api/openapi.ts';
import { apiRouter } from '../../src/api/routes.ts';
import type { Runtime } from '../../src/runtime.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { withTestRoutes } from '../support/test-routes.ts';

/** (method, path) of every route the express router mounts, as OpenAPI writes them. */
function mounted(router: any): string[] {
  const out: string[] = [];
  for (const layer of router.stack) {
    if (!layer.route) continue;
    for (const method of Object.keys(layer.route.methods)) {
      if (method !== '_all') out.push(`${method} ${openapiPath(layer.route.path)}`);
    }
  }
  return out.filter((r) => r !== 'get /openapi.json');
}

describe('OpenAPI document', () => {
  let server: TestServer;
  let doc: any;

  before(async () => {
    server = await startTestServer({ roles: ['api'], routes: withTestRoutes });
    const res = await fetch(`${server.root}/openapi.json`);
    expect(res.status).to.equal(200);
    doc = await res.json();
  });
  after(() => server?.stop());

  it('is served without auth at /openapi.json and /api/v1/openapi.json', async () => {
    expect(doc.openapi).to.equal('3.1.0');
    const again = await (await fetch(`${server.url}/openapi.json`)).json();
    expect(again).to.deep.equal(doc);
  });

  it('documents every route the express router mounts, and nothing else', () => {
    const router = apiRouter({ database: { pool: null } } as unknown as Runtime, withTestRoutes);
    const inRouter = mounted(router).sort();
    const inDoc = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`))
      .sort();
    expect(inRouter.length).to.equal(withTestRoutes.length);
    expect(inDoc).to.deep.equal(inRouter);
  });

  it('describes scope, parameters, body, envelope and errors of each operation', () => {
    const create = doc.paths['/_test/things'].post;
    expect(create['x-required-scope']).to.equal('invoices:write');
    expect(create.description).to.contain('invoices:write');
    expect(create.requestBody.content['application/json'].schema.additionalProperties).to.equal(false);
    expect(create.responses['201'].content['application/json'].schema.required).to.deep.equal(['success', 'data']);
    expect(Object.keys(create.responses)).to.include.members(['400', '401', '403', '409', '413', '415', '429', '500']);
    expect(create.responses['429'].headers).to.have.property('Retry-After');
    expect(create.parameters.map((p: any) => p.$ref ?? p.name)).to.include('#/components/parameters/IdempotencyKey');

    const echo = doc.paths['/_test/echo'].get;
    const page = echo.parameters.find((p: any) => p.name === 'page');
    expect(page).to.deep.include({ in: 'query', required: false });
    expect(echo.responses['200'].content['application/json'].schema.properties).to.have.property('meta');

    const read = doc.paths['/_test/things/{id}'].get;
    expect(read.parameters[0]).to.deep.equal({ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } });
    expect(read.responses['404'].description).to.contain('NOT_FOUND');

    const account = doc.paths['/_test/account'].get;
    expect(account.responses['403'].description).to.contain('ACCOUNT_KEY_REQUIRED');
    expect(doc.components.securitySchemes.bearerAuth).to.include({ type: 'http', scheme: 'bearer' });
  });
});
