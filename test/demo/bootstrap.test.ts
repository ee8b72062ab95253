/** The demo bootstrap: once, on an empty test-mode database, even with two processes starting together. */
import { expect } from 'chai';
import { loadConfig } from '../../src/config.ts';
import { bootstrapDemo, demoBanner, DEMO_ORGANIZATION } from '../../src/demo/bootstrap.ts';
import { processParts } from '../../src/main.ts';
import { openRuntime, type Runtime } from '../../src/runtime.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { call } from '../support/fixtures.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { startTestServer } from '../support/server.ts';

describe('demo bootstrap', function () {
  let database: TestDatabase;
  const runtimes: Runtime[] = [];
  const open = async (env: Record<string, string> = {}) => {
    const rt = await openRuntime(loadConfig({ DATABASE_URL: database.url, PORT: '3000', DEMO_BOOTSTRAP: process.env.DEMO_BOOTSTRAP, ...env }), silentLogger, { projectors: processParts.projectors, poolSize: 4 });
    runtimes.push(rt);
    return rt;
  };

  beforeEach(async function () {
    database = await freshDatabase();
    delete process.env.DEMO_BOOTSTRAP; // test/hooks.ts turns it off for every other suite
  });
  afterEach(async function () {
    process.env.DEMO_BOOTSTRAP = 'false';
    await Promise.all(runtimes.splice(0).map((rt) => rt.close()));
    await database.drop();
  });

  it('two processes starting at once create one demo; its key works; later starts do nothing', async function () {
    const [a, b] = await Promise.all([open(), open()]);
    const results = await Promise.all([bootstrapDemo(a), bootstrapDemo(b)]);
    const created = results.filter((r) => r !== null);
    expect(created).to.have.length(1);
    const demo = created[0]!;
    expect(demo.secret).to.match(/^svc_test_/);
    const { rows } = await database.pool.query('select (select count(*) from accounts) as accounts, (select count(*) from organizations) as orgs');
    expect(rows[0]).to.deep.equal({ accounts: '1', orgs: '1' });

    const banner = demoBanner(a, demo);
    expect(banner).to.include(`curl -H "Authorization: Bearer ${demo.secret}" http://localhost:3000/api/v1/organization`);

    const server = await startTestServer({ database, roles: ['api', 'projector'] }); // runs the start-up hook again: nothing new
    try {
      const res = await call(`${server.url}/organization`, demo.secret);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data).to.include({ id: demo.organizationId, legal_name: DEMO_ORGANIZATION.legal_name, ice: DEMO_ORGANIZATION.ice });
    } finally {
      await server.stop();
    }
    expect(await bootstrapDemo(a)).to.equal(null);
    expect((await database.pool.query('select count(*) as n from accounts')).rows[0].n).to.equal('1');
  });

  it('never in live mode, nor when DEMO_BOOTSTRAP=false', async function () {
    expect(await bootstrapDemo(await open({ SERVICE_MODE: 'live' }))).to.equal(null);
    process.env.DEMO_BOOTSTRAP = 'false';
    expect(await bootstrapDemo(await open())).to.equal(null);
    expect((await database.pool.query('select count(*) as n from accounts')).rows[0].n).to.equal('0');
  });
});
