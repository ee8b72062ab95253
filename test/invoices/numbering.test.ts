/**
 * Gapless numbers under stress (CONTRACT section 3): two API processes on one
 * database (two servers in this process, each with its own pool, numbering
 * cache and projectors), 200 drafts finalized all at once through both.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/wait.ts';
import { bindClient, invoicesClient } from './support.ts';

const expected = (year: number, n: number) => Array.from({ length: n }, (_, i) => `INV-${year}-${String(i + 1).padStart(6, '0')}`);

async function inBatches<T>(items: T[], size: number, fn: (item: T, i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map((item, k) => fn(item, i + k)));
}

describe('invoice numbering under concurrency (two servers, one database)', function () {
  this.timeout(180_000);
  let database: TestDatabase;
  let a: TestServer;
  let b: TestServer;

  before(async () => {
    database = await freshDatabase();
    a = await startTestServer({ database });
    b = await startTestServer({ database });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await database?.drop();
  });

  it('200 concurrent finalizes: exactly INV-YYYY-000001..000200, no gap, no duplicate, per year', async () => {
    const viaA = await invoicesClient(a);
    const viaB = bindClient(b.url, viaA.tenant); // the same tenant and key through the other process
    const customer = await viaA.customer();
    // 200 drafts issued in 2026 and 40 in 2025, created through both servers.
    const drafts: { id: string; year: number }[] = [];
    await inBatches(Array.from({ length: 240 }, (_, i) => i), 24, async (i) => {
      const year = i % 6 === 5 ? 2025 : 2026;
      const client = i % 2 === 0 ? viaA : viaB;
      const d = await client.draft(customer.id, { issue_date: `${year}-0${1 + (i % 9)}-15` });
      drafts.push({ id: d.id, year });
    });
    expect(drafts.filter((d) => d.year === 2026)).to.have.length(200);

    const replies = await Promise.all(drafts.map((d, i) => [viaA, viaB][i % 2].action(d.id, 'finalize')));
    const failed = replies.filter((r) => r.status !== 200);
    expect(failed, JSON.stringify(failed.slice(0, 3))).to.deep.equal([]);

    for (const year of [2025, 2026]) {
      const mine = replies.filter((r) => r.body.data.issue_date.startsWith(String(year)));
      expect(mine.map((r) => r.body.data.invoice_number).sort()).to.deep.equal(expected(year, year === 2026 ? 200 : 40));
    }
    // Read models agree: every invoice numbered once, the audit table continuous. The audit table is written
    // with each finalize (inline), or by its runner with INLINE_PROJECTIONS=false (no answer waits for it), so
    // it is awaited first; then it must hold exactly the numbers given.
    const audited = async () =>
      (await sql<{ n: number }>`select count(*)::int as n from invoice_numbers where organization_id = ${viaA.tenant.organizationId}`.execute(database.db)).rows[0].n;
    await until(async () => (await audited()) >= 240, 20_000, 'the audit table of numbers');
    const { rows } = await sql<{ year: number; n: number; max: number; distinct_invoices: number }>`
      select year, count(*)::int as n, max(sequence) as max, count(distinct invoice_id)::int as distinct_invoices
        from invoice_numbers where organization_id = ${viaA.tenant.organizationId} group by year order by year`.execute(database.db);
    expect(rows).to.deep.equal([
      { year: 2025, n: 40, max: 40, distinct_invoices: 40 },
      { year: 2026, n: 200, max: 200, distinct_invoices: 200 },
    ]);
    const numbered = await sql<{ n: number }>`
      select count(distinct invoice_number)::int as n from invoices
       where organization_id = ${viaA.tenant.organizationId} and status = 'finalized' and not finalization_pending`.execute(database.db);
    expect(numbered.rows[0].n).to.equal(240);
    // Every number in the audit table is on its invoice.
    const mismatched = await sql<{ n: number }>`
      select count(*)::int as n from invoice_numbers n join invoices i on i.id = n.invoice_id
       where i.invoice_number is distinct from n.number`.execute(database.db);
    expect(mismatched.rows[0].n).to.equal(0);
  });
});
