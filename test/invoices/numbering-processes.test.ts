/**
 * Gapless numbers through two real server processes (`node --import tsx
 * src/main.ts` twice) on one database, the way the issue states it: 200
 * drafts finalized all at once through both give exactly
 * INV-2026-000001..000200. Each process runs every role, so only one of them
 * holds each projector's lock: a write answered by the other one waited for
 * a projector in another process (progress notifications between
 * processes), and what it answered must already be readable through both.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { freePort } from '../../src/db/embedded.ts';
import { newIce } from '../customers/support.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { createTenant } from '../support/fixtures.ts';
import { ServerProcess } from '../support/server-process.ts';
import { until } from '../support/wait.ts';
import { bindClient } from './support.ts';

const DRAFTS = 200;
const expected = Array.from({ length: DRAFTS }, (_, i) => `INV-2026-${String(i + 1).padStart(6, '0')}`);

describe('invoice numbering through two server processes on one database', function () {
  this.timeout(240_000);
  let t: TestDatabase;
  const servers: ServerProcess[] = [];

  before(async () => {
    t = await freshDatabase();
    for (let i = 0; i < 2; i++) servers.push(new ServerProcess(t.url, await freePort()));
    await Promise.all(servers.map((s) => s.start()));
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') for (const s of servers) console.log(`      server ${s.port} output (tail):\n${s.output.slice(-3000)}`);
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.kill('SIGTERM').catch(() => {})));
    await t?.drop();
  });

  it('200 concurrent finalizes: exactly INV-2026-000001..000200, each readable through both processes once answered', async () => {
    const tenant = await createTenant(t.db, { plan: 'fiduciaire', account: { requestsPerMinute: 1_000_000 }, organization: { ice: newIce() } });
    const [a, b] = servers.map((s) => bindClient(`${s.root}/api/v1`, tenant));
    const customer = await a.customer();
    const ids: string[] = [];
    for (let i = 0; i < DRAFTS; i += 25) {
      const batch = await Promise.all(Array.from({ length: 25 }, (_, k) => [a, b][(i + k) % 2].draft(customer.id, { issue_date: '2026-06-15' })));
      ids.push(...batch.map((d) => d.id));
    }

    const stale: string[] = [];
    const numbers = await Promise.all(
      ids.map(async (id, i) => {
        const [via, other] = i % 2 === 0 ? [a, b] : [b, a];
        const res = await via.action(id, 'finalize');
        expect(res.status, JSON.stringify(res.body).slice(0, 300)).to.equal(200);
        // Read your writes, across processes: the other process shows the answered state at once.
        const seen = (await other.get(id)).body.data;
        if (seen.status !== 'finalized' || seen.invoice_number !== res.body.data.invoice_number) stale.push(id);
        return res.body.data.invoice_number as string;
      }),
    );
    expect(stale, 'invoices not yet finalized through the other process right after the answer').to.deep.equal([]);
    expect([...numbers].sort()).to.deep.equal(expected);

    // The audit table of numbers is written with each finalize (inline), or by its runner with
    // INLINE_PROJECTIONS=false (no answer waits for it): awaited, then exact.
    const audited = async () => (await sql<{ n: number }>`select count(*)::int as n from invoice_numbers where organization_id = ${tenant.organizationId}`.execute(t.db)).rows[0].n;
    await until(async () => (await audited()) >= DRAFTS, 20_000, 'the audit table of numbers');
    const { rows } = await sql<{ n: number; max: number; distinct_invoices: number }>`
      select count(*)::int as n, max(sequence) as max, count(distinct invoice_id)::int as distinct_invoices
        from invoice_numbers where organization_id = ${tenant.organizationId}`.execute(t.db);
    expect(rows[0]).to.deep.equal({ n: DRAFTS, max: DRAFTS, distinct_invoices: DRAFTS });
    const mismatched = await sql<{ n: number }>`
      select count(*)::int as n from invoice_numbers n join invoices i on i.id = n.invoice_id
       where i.invoice_number is distinct from n.number`.execute(t.db);
    expect(mismatched.rows[0].n).to.equal(0);
    for (const s of servers) expect(s.output).not.to.match(/projector stopped on a failing event|answering the decided state/);
  });
});
