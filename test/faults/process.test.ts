/**
 * The server killed with SIGKILL in the middle of its work
 * (docs/reliability.md) under a write load (FAULT_KILLS times: 1 in `npm test`,
 * 3 in `npm run test:faults`), restarted each time
 * on the same embedded PostgreSQL (which outlives it and is adopted). After:
 * interrupted finalizations are completed by the recovery worker, nothing
 * acknowledged is lost, numbers are 1..N, read models equal a rebuild.
 *
 * SIGKILL mid-tick of the recurring scheduler: the hook is below. The
 * scheduler is not part of this branch yet; once a worker with role
 * 'scheduler' is in processParts, the test runs the same kill loop while a
 * tick is generating invoices and checks, in addition, that every schedule
 * generated each due occurrence exactly once (fill in
 * `expectSchedulesGeneratedOnce` with the scheduler's own read model).
 */
import { expect } from 'chai';
import { processParts } from '../../src/main.ts';
import { until } from '../support/wait.ts';
import { FaultServer, provisionTenant, WriteLoad } from './harness.ts';
import { expectGaplessNumbering, expectNothingAcknowledgedLost, expectProjectionsEqualRebuild, waitForNoPendingFinalization } from './invariants.ts';

const KILLS = Number(process.env.FAULT_KILLS ?? 1);

describe('faults: the server is killed (SIGKILL) mid-work and restarted', function () {
  this.timeout(600_000);
  let server: FaultServer;

  beforeEach(async () => {
    server = await FaultServer.create();
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') console.log(`      server output (tail):\n${server.output.slice(-4000)}`);
    await server.close();
  });

  it(`SIGKILL mid-finalize ${KILLS} times under load: finalizations completed, nothing acknowledged lost, numbers 1..N, projections equal a rebuild`, async () => {
    const api = await provisionTenant(server);
    const customer = await api.customer();
    const load = new WriteLoad(api, customer.id);
    load.start();
    for (let kill = 0; kill < KILLS; kill++) {
      await load.progressed(20);
      await until(() => load.finalizing > 0, 30_000, 'a finalize in flight', 1);
      await server.kill('SIGKILL');
      await server.start();
    }
    await load.progressed(20);
    await load.stop();
    // A killed server drops connections ("no answer"); what it did answer is never a 500.
    expect(load.wrong.filter((w) => !w.includes('no answer')), 'answers other than success, 409 or 503').to.deep.equal([]);
    const after = await api.finalized(customer.id);
    expect(after.invoice_number).to.match(/^INV-/);
    await waitForNoPendingFinalization(server.db);
    await expectNothingAcknowledgedLost(server.db, load);
    await expectGaplessNumbering(server.db);
    await expectProjectionsEqualRebuild(server.db, server.pool, server.url);
  });

  it('SIGKILL mid-tick of the recurring scheduler (hook: runs once the scheduler worker exists)', function () {
    const scheduler = processParts.workers.find((w) => w.role === 'scheduler');
    console.log(
      scheduler
        ? `      skipped: the scheduler worker (${scheduler.name}) exists but this test is not written yet: see the comment at the top of this file`
        : '      skipped: no scheduler worker in processParts yet (the recurring schedules land separately)',
    );
    this.skip();
  });
});
