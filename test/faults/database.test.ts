/**
 * Database faults under a write load (docs/reliability.md): every connection
 * of the server terminated (pg_terminate_backend: a failover, a PgBouncer
 * restart, an idle timeout), and the embedded PostgreSQL stopped and started.
 * After each: the process is alive, /readyz is 200 within 20 s, writes
 * succeed, nothing acknowledged is lost, numbers are 1..N, and every read
 * model equals a rebuild. Refused requests are 503 with Retry-After, never a
 * 500 or a dropped connection.
 *
 * FAULT_ROUNDS (default 5; `npm run test:faults` runs 10) sets how many times
 * the backends are terminated. Recovery times are printed (FAULT_REPORT=1
 * prints them always) for docs/reliability.md.
 */
import { expect } from 'chai';
import { FaultServer, provisionTenant, WriteLoad } from './harness.ts';
import { expectGaplessNumbering, expectNothingAcknowledgedLost, expectProjectionsEqualRebuild, waitForNoPendingFinalization } from './invariants.ts';
import { until } from '../support/wait.ts';

const ROUNDS = Number(process.env.FAULT_ROUNDS ?? 5);
const report = (line: string) => {
  if (process.env.FAULT_REPORT) console.log(`      ${line}`);
};

describe('faults: the database goes away under a write load', function () {
  this.timeout(600_000);
  let server: FaultServer;

  beforeEach(async () => {
    server = await FaultServer.create();
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') console.log(`      server output (tail):\n${server.output.slice(-4000)}`);
    await server.close();
  });

  async function afterwards(load: WriteLoad, api: Awaited<ReturnType<typeof provisionTenant>>, customerId: string): Promise<void> {
    await load.stop();
    expect(server.alive(), 'server process alive').to.equal(true);
    expect(load.wrong, 'answers that are neither success, 409 nor 503 with Retry-After').to.deep.equal([]);
    // Writes succeed again.
    const after = await api.finalized(customerId);
    expect(after.invoice_number).to.match(/^INV-/);
    await waitForNoPendingFinalization(server.db);
    await expectNothingAcknowledgedLost(server.db, load);
    // First every read model caught up with the log and equal to a rebuild (the numbers projector may still
    // be reconnecting when an answer came from a row written inline), then the numbering across them.
    await expectProjectionsEqualRebuild(server.db, server.pool, server.url);
    const numbered = await expectGaplessNumbering(server.db);
    expect(numbered).to.be.greaterThan(load.finalized.size - 1);
    expect(server.output).not.to.match(/Unhandled 'error' event|projector stopped on a failing event/);
  }

  it(`every backend terminated ${ROUNDS} times: alive, ready within 20 s, nothing acknowledged lost, projections equal a rebuild`, async () => {
    const api = await provisionTenant(server);
    const customer = await api.customer();
    const load = new WriteLoad(api, customer.id);
    load.start();
    const recoveries: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await load.progressed(20);
      const terminated = await server.terminateBackends();
      expect(terminated, 'connections terminated').to.be.greaterThan(0);
      recoveries.push(await server.msUntilReady(20_000));
      expect(server.alive(), `alive after round ${round + 1}`).to.equal(true);
    }
    await load.progressed(20);
    report(`terminate x${ROUNDS}: /readyz 200 after ${recoveries.join(', ')} ms; answers ${JSON.stringify(load.statuses)}; acknowledged ${load.drafts.size} drafts, ${load.finalized.size} finalizes`);
    await afterwards(load, api, customer.id);
  });

  it('embedded PostgreSQL stopped and started under load: 503 with Retry-After meanwhile, /readyz 503 then 200, nothing lost', async () => {
    const api = await provisionTenant(server);
    const customer = await api.customer();
    const load = new WriteLoad(api, customer.id);
    load.start();
    await load.progressed(20);
    await server.stopDatabase();
    await until(async () => (await server.readyz()) === 503, 20_000, '/readyz 503 during the outage', 50);
    const refusedBefore = load.statuses['503'] ?? 0;
    await until(() => (load.statuses['503'] ?? 0) > refusedBefore + 5, 20_000, 'writes answered 503 during the outage', 20);
    expect(server.alive(), 'alive with the database down').to.equal(true);
    await server.startDatabase();
    const ms = await server.msUntilReady(20_000);
    await load.progressed(20);
    report(`restart: /readyz 200 ${ms} ms after PostgreSQL was back; answers ${JSON.stringify(load.statuses)}`);
    await afterwards(load, api, customer.id);
  });
});
