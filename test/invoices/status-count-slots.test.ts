/**
 * invoice_status_counts in slots (migration 0070, src/projections/invoices.ts):
 * the migration's recomputation from the invoices table gives exactly the
 * rows the projector writes, and lists' totals (the sum of the slots) are
 * the invoices' counts.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import * as m0070 from '../../src/db/migrations/0070_invoice_status_count_slots.ts';
import * as m0071 from '../../src/db/migrations/0071_invoice_status_count_256_slots.ts';
import { withInvoicesApi, type InvoicesClient } from './support.ts';
import type { TestServer } from '../support/server.ts';

async function counts(server: TestServer): Promise<string[]> {
  const { rows } = await sql<{ r: string }>`
    select row_to_json(c)::text as r from invoice_status_counts c order by organization_id, status, slot`.execute(server.database.db);
  return rows.map((x) => x.r);
}

describe('invoice_status_counts in slots', function () {
  this.timeout(60_000);
  let server: TestServer;
  let api: InvoicesClient;
  let customer: any;
  withInvoicesApi((f) => ({ server, api, customer } = f));

  it('migrations 0070 and 0071 recompute the rows the projector writes; list totals are the counts', async () => {
    const drafts = await Promise.all(Array.from({ length: 24 }, () => api.draft(customer.id)));
    for (const d of drafts.slice(0, 6)) expect((await api.action(d.id, 'finalize')).status).to.equal(200);
    for (const d of drafts.slice(0, 2)) expect((await api.action(d.id, 'send')).status).to.equal(200);
    const live = await counts(server);
    // Several slots, each with all five statuses.
    expect(live.length % 5).to.equal(0);
    expect(live.length).to.be.greaterThan(5);

    expect((await api.list('status=draft')).body.meta.pagination.total).to.equal(18);
    expect((await api.list('status=finalized')).body.meta.pagination.total).to.equal(4);
    expect((await api.list('status=sent')).body.meta.pagination.total).to.equal(2);
    expect((await api.list()).body.meta.pagination.total).to.equal(24);

    await m0070.down(server.database.db);
    const { rows } = await sql<{ status: string; invoices: number }>`
      select status, invoices from invoice_status_counts where organization_id = ${api.tenant.organizationId} order by status`.execute(server.database.db);
    expect(rows).to.deep.equal([
      { status: 'draft', invoices: 18 }, { status: 'finalized', invoices: 4 }, { status: 'paid', invoices: 0 },
      { status: 'sent', invoices: 2 }, { status: 'void', invoices: 0 },
    ]);
    await m0070.up(server.database.db); // 16 slots
    await m0071.up(server.database.db); // 256, as the projector writes them
    expect(await counts(server)).to.deep.equal(live);
  });
});
