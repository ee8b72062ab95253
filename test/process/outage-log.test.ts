/**
 * A database outage in the log: one error line when it starts (no stacks, not
 * one line per failing request or loop) and one line when it ends, with what
 * was held back (src/db/outage-log.ts, docs/operations.md "Logs"). The server
 * runs as `npm start` does, on its own embedded PostgreSQL, which is stopped
 * under it while clients keep calling.
 */
import { expect } from 'chai';
import { call, createTenant } from '../support/fixtures.ts';
import { until } from '../support/wait.ts';
import { FaultServer } from '../faults/harness.ts';

describe('database outage: one error line, then one summary', function () {
  this.timeout(240_000);
  let server: FaultServer;

  before(async () => {
    server = await FaultServer.create();
  });
  after(() => server?.close());

  const logLines = () =>
    server.output
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));

  it('logs the outage once and its end once', async () => {
    const tenant = await createTenant(server.db);
    expect((await call(`${server.api}/customers`, tenant.key.secret)).status).to.equal(200);
    const before = logLines().length;

    await server.stopDatabase();
    await until(async () => (await server.readyz()) === 503, 30_000, '/readyz 503', 100);
    // /readyz is public: states, never the driver's error text.
    const ready = await (await fetch(`${server.root}/readyz`)).json();
    expect(ready.status).to.equal('not_ready');
    expect(ready.checks.database).to.equal('unreachable');
    expect(JSON.stringify(ready)).not.to.match(/ECONN|connect|terminat|127\.0\.0\.1|Error/);
    // Requests during the outage: each answers 503, none gets its own error line.
    const statuses = [];
    for (let i = 0; i < 10; i++) statuses.push((await call(`${server.api}/customers`, tenant.key.secret)).status);
    expect(statuses.every((s) => s === 503), JSON.stringify(statuses)).to.equal(true);
    await server.startDatabase();
    await server.msUntilReady(30_000);
    await until(() => logLines().some((l) => /database reachable again/.test(l.msg)), 30_000, 'the end-of-outage line', 100);

    const during = logLines().slice(before);
    const errors = during.filter((l) => l.level >= 50);
    expect(errors.map((l) => l.msg), JSON.stringify(errors)).to.deep.equal(['database unreachable']);
    expect(errors[0].first_error).to.be.a('string');
    const ends = during.filter((l) => /database reachable again/.test(l.msg));
    expect(ends).to.have.length(1);
    expect(ends[0].duration_ms).to.be.greaterThan(0);
    expect(ends[0].lines_held_back).to.be.greaterThan(0);
    // No stack anywhere in the outage's lines.
    expect(JSON.stringify(during)).not.to.match(/\\n\s+at /);
    expect(server.alive()).to.equal(true);
  });
});
