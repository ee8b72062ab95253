/**
 * The server killed with SIGKILL in the middle of its work
 * (docs/reliability.md) under a write load (FAULT_KILLS times: 1 in `npm test`,
 * 3 in `npm run test:faults`), restarted each time
 * on the same embedded PostgreSQL (which outlives it and is adopted). After:
 * interrupted finalizations are completed by the recovery worker, nothing
 * acknowledged is lost, numbers are 1..N, read models equal a rebuild.
 *
 * The same for the recurring scheduler (docs/recurring.md): killed while a
 * tick is generating and finalizing invoices, restarted; after, every due
 * occurrence of every schedule has exactly one invoice dated on its run
 * date, numbers are 1..N and read models equal a rebuild.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { schedulesClientOf, dayFromToday, line } from '../schedules/support.ts';
import { until } from '../support/wait.ts';
import { FaultServer, provisionTenant, WriteLoad } from './harness.ts';
import { expectGaplessNumbering, expectNothingAcknowledgedLost, expectProjectionsEqualRebuild, waitForNoPendingFinalization } from './invariants.ts';

const KILLS = Number(process.env.FAULT_KILLS ?? 1);

describe('faults: the server is killed (SIGKILL) mid-work and restarted', function () {
  this.timeout(600_000);
  let server: FaultServer;

  beforeEach(async () => {
    // The scheduler's cron fires on 1 January only until a test says otherwise.
    server = await FaultServer.create({ SCHEDULER_CRON: '0 0 1 1 *' });
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
    await expectProjectionsEqualRebuild(server.db, server.pool, server.url); // caught up first (it waits), then the numbering
    await expectGaplessNumbering(server.db);
  });

  it(`SIGKILL mid-tick of the recurring scheduler ${KILLS} times: each due occurrence invoiced once, numbers 1..N, projections equal a rebuild`, async () => {
    const api = schedulesClientOf(await provisionTenant(server));
    const customer = await api.invoices.customer();
    // Schedules are created while the scheduler is idle, so the restarted server's first ticks
    // find all their occurrences due at once.
    const schedules = 12;
    const weeks = 8; // weekly from 8 weeks ago: 9 due runs each, all numbered (auto_finalize)
    for (let i = 0; i < schedules; i++) await api.make(customer.id, { frequency: 'weekly', start_date: dayFromToday(-7 * weeks), auto_finalize: true, items: [line()] });
    const expected = schedules * (weeks + 1);
    const organizationId = api.invoices.tenant.organizationId;
    const count = async (query: ReturnType<typeof sql<{ n: number }>>) => (await query.execute(server.db)).rows[0].n;
    const numbered = () => count(sql<{ n: number }>`select count(*)::int as n from invoice_numbers where organization_id = ${organizationId}`);

    await server.kill('SIGTERM');
    server.env = { SCHEDULER_CRON: '* * * * * *' }; // every second
    await server.start();
    for (let kill = 0; kill < KILLS; kill++) {
      // Numbers are taken in the tick's own transactions: more than before, fewer than all = mid-tick.
      const threshold = Math.floor(((kill + 1) * expected) / (KILLS + 2));
      await until(async () => (await numbered()) >= threshold, 120_000, `${threshold} occurrences numbered`, 10);
      expect(await numbered(), 'killed before the tick finished').to.be.below(expected);
      await server.kill('SIGKILL');
      await server.start();
    }
    const runs = () => count(sql<{ n: number }>`
      select count(*)::int as n from schedule_runs where organization_id = ${organizationId} and status = 'success' and invoice_number is not null`);
    await until(async () => (await runs()) === expected, 240_000, `${expected} numbered runs`, 250);
    await waitForNoPendingFinalization(server.db);
    // One invoice per (schedule, occurrence), dated on its own run date, and no other.
    const perRun = await count(sql<{ n: number }>`
      select count(*)::int as n from schedule_runs r join invoices i on i.id = r.invoice_id and i.issue_date = r.run_date
       where r.organization_id = ${organizationId}`);
    expect(perRun).to.equal(expected);
    expect(await count(sql<{ n: number }>`select count(*)::int as n from invoices where organization_id = ${organizationId}`)).to.equal(expected);
    await expectProjectionsEqualRebuild(server.db, server.pool, server.url); // caught up first (it waits), then the numbering
    expect(await expectGaplessNumbering(server.db)).to.equal(expected);
  });
});
