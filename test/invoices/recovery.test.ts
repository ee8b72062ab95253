/**
 * The finalize protocol's failure points, reproduced by running its steps by
 * hand, and the recovery that completes them; and the numbering cache of two
 * processes racing on one stream.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { completePendingFinalization } from '../../src/commands/invoice/handler-finalize.ts';
import { runOnInvoice, type InvoiceWrite } from '../../src/commands/invoice/handlers.ts';
import { InvoiceNumbering } from '../../src/commands/invoicenumber/handler.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { EventMetadata } from '../../src/eventstore/types.ts';
import { readModelFacts } from '../../src/queries/invoice-facts.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { recoverFinalizations } from '../../src/workers/finalization-recovery.ts';
import { createPool } from '../../src/db/database.ts';
import type { TestServer } from '../support/server.ts';
import { expectError, withInvoicesApi, type InvoicesClient } from './support.ts';

function meta(organizationId: string): EventMetadata {
  return { organization_id: organizationId, actor: 'test', request_id: null, correlation_id: 'corr-1', causation_id: null, occurred_at: new Date().toISOString() };
}

describe('finalization recovery', function () {
  this.timeout(60_000);
  let server: TestServer;
  let api: InvoicesClient;
  let customer: any;
  const rt = () => server.server.runtime;
  const write = (): InvoiceWrite => ({
    store: rt().store,
    organizationId: api.tenant.organizationId,
    metadata: meta(api.tenant.organizationId),
    facts: readModelFacts(rt().database.pool),
  });

  /** Step (1) only: the request "died" right after locking the draft. */
  async function lockOnly(id: string): Promise<void> {
    const w = write();
    const [c, o] = await Promise.all([w.facts.customer(w.organizationId, customer.id), w.facts.organization(w.organizationId)]);
    const r = await runOnInvoice(w, id, (_s, m) => ({ type: 'StartFinalization', data: { invoice_id: id, customer: c, organization: o }, metadata: m }));
    expect(await rt().progress.waitFor(r.position)).to.equal(true);
  }
  withInvoicesApi((f) => ({ server, api, customer } = f));

  it('a draft locked by a dead finalize refuses edits and actions, then recovery issues it with the next number', async () => {
    const draft = await api.draft(customer.id);
    await lockOnly(draft.id);
    expect((await api.get(draft.id)).body.data).to.include({ status: 'draft', invoice_number: null, version: 1 });
    expectError(await api.patch(draft.id, { notes: 'x' }), 409, 'INVOICE_NOT_EDITABLE');
    expectError(await api.action(draft.id, 'finalize'), 409, 'INVOICE_NOT_DRAFT');
    expectError(await api.action(draft.id, 'send'), 409, 'INVALID_STATUS_TRANSITION');
    const pending = await sql<{ n: number }>`select count(*)::int as n from invoices where id = ${draft.id} and finalization_pending`.execute(rt().database.db);
    expect(pending.rows[0].n).to.equal(1);

    // Inside the grace period nothing happens (a live request would be finishing it).
    expect(await recoverFinalizations({ db: rt().database.db, pool: rt().database.pool, store: rt().store, logger: silentLogger })).to.equal(0);
    expect(await recoverFinalizations({ db: rt().database.db, pool: rt().database.pool, store: rt().store, logger: silentLogger }, 0)).to.equal(1);
    const events = (await api.events(draft.id)).body.data;
    expect(events.map((e: any) => [e.type, e.actor])).to.deep.equal([
      ['invoice.created', api.tenant.key.id], ['invoice.finalization_started', 'test'], ['invoice.finalized', 'system'],
    ]);
    const stored = await rt().store.readStream(`invoice-${draft.id}`);
    expect(stored[2].metadata).to.include({ causation_id: stored[1].id, correlation_id: 'corr-1', organization_id: api.tenant.organizationId });
    await rt().progress.waitFor(stored[2].position);
    const after = (await api.get(draft.id)).body.data;
    expect(after).to.include({ status: 'finalized', invoice_number: 'INV-2026-000001', version: 2, finalized_at: events[1].data.invoice.updated_at });
    expect(await recoverFinalizations({ db: rt().database.db, pool: rt().database.pool, store: rt().store, logger: silentLogger }, 0)).to.equal(0);
  });

  it('a number taken but not yet on its invoice stays that invoice\'s: no gap, no second number', async () => {
    const a = await api.draft(customer.id);
    await lockOnly(a.id);
    const numbering = new InvoiceNumbering(rt().store); // another process's cache
    expect(await numbering.assign(api.tenant.organizationId, 2026, a.id, meta(api.tenant.organizationId))).to.equal('INV-2026-000001');
    // Meanwhile, other invoices are finalized normally.
    const b = await api.finalized(customer.id);
    expect(b.invoice_number).to.equal('INV-2026-000002');
    // Recovery, the same call twice at once, and a third process: all settle on 000001.
    const facts = readModelFacts(rt().database.pool);
    const results = await Promise.all([
      completePendingFinalization(rt().store, facts, api.tenant.organizationId, a.id),
      completePendingFinalization(rt().store, facts, api.tenant.organizationId, a.id),
      recoverFinalizations({ db: rt().database.db, pool: rt().database.pool, store: rt().store, logger: silentLogger }, 0),
    ]);
    expect(results.filter((r) => typeof r === 'string')).to.satisfy((ns: string[]) => ns.every((n) => n === 'INV-2026-000001'));
    const events = (await api.events(a.id)).body.data;
    expect(events.filter((e: any) => e.type === 'invoice.finalized')).to.have.length(1);
    // Recovery is no API write: nothing waited for the read model yet.
    expect(await rt().progress.waitFor((await rt().store.headPosition())!, 5000)).to.equal(true);
    expect((await api.get(a.id)).body.data.invoice_number).to.equal('INV-2026-000001');
    expect((await api.finalized(customer.id)).invoice_number).to.equal('INV-2026-000003');
  });

  it('two numbering caches racing on one stream: consecutive numbers, repeats answered from the stream', async () => {
    const org = uuidv7();
    const pool = createPool(server.database.url, 10, 'second-process');
    const otherStore = await createPostgresEventStore(pool, server.database.url);
    try {
      const one = new InvoiceNumbering(rt().store);
      const two = new InvoiceNumbering(otherStore);
      const ids = Array.from({ length: 300 }, () => uuidv7());
      const numbers = await Promise.all(ids.map((id, i) => (i % 2 ? one : two).assign(org, 2026, id, meta(org))));
      expect([...numbers].sort()).to.deep.equal(Array.from({ length: 300 }, (_, i) => `INV-2026-${String(i + 1).padStart(6, '0')}`));
      // Asking again, through either cache, returns the same number (no new event).
      const again = await Promise.all(ids.map((id, i) => (i % 2 ? two : one).assign(org, 2026, id, meta(org))));
      expect(again).to.deep.equal(numbers);
      const stream = await rt().store.readStream(`invoicenumbers-${org}-2026`);
      expect(stream).to.have.length(300);
      // Batching: far fewer appends (transactions) than numbers.
      const { rows } = await pool.query(`select count(distinct transaction_id)::int as n from es_events where stream_id = $1`, [`invoicenumbers-${org}-2026`]);
      expect(rows[0].n).to.be.lessThan(300);
    } finally {
      await otherStore.close();
      await pool.end();
    }
  });
});
