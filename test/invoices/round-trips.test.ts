/**
 * Round trips to PostgreSQL on a lone write's path (issue 16; docs/performance.md "What a lone create and a
 * lone finalize send now, and why"), counted on the server's pool between the request and its answer:
 *
 * - a create: the key (with its rate-limit count and the customer its body names, src/api/pipeline/prefetch.ts),
 *   and one message that is the whole write (the event, the invoice's row, its lines and counts, in one
 *   implicit transaction); once the process remembers the key and the customer, the message alone, the key,
 *   the customer and the count checked in it (src/api/pipeline/remembered.ts);
 * - a finalize: the key (with the seller's legal name and ICE, the invoice's stream and the customer the
 *   invoice's row names, all from one snapshot: src/api/pipeline/prefetch.ts); and one message (both streams'
 *   appends, the row, the number's audit row). Send, pay, void
 *   and an edit (PATCH): the key with the stream (an edit's with the customer its body names), and the append.
 *
 * Left out: what follows every write and does not delay its answer (the log's tail read, the webhook
 * subscriber's question, the consumers' checkpoints, the workers' polls), and the PREPARE of a statement the
 * first time a connection sends it. A new round trip on the path fails this test: say in docs/performance.md why it is
 * needed, then count it here.
 */
import { expect } from 'chai';
import { interceptQueries, queryLabel, type QueryArgument } from '../support/pool-queries.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { call } from '../support/fixtures.ts';
import { dayFromToday } from '../schedules/support.ts';
import { invoicesClient, line, type InvoicesClient } from './support.ts';

// The consumers' reads and writes after a write, and the background workers' polls (the schedule reactions).
const AFTER_WORK = /^(es_read_all|prepare |.*webhook_endpoints|.*projection_checkpoints|.*schedule_reactions|begin; set local)/is;

/** A query's statement name, else its text (whitespace folded). */
function label(first: QueryArgument): string {
  const text = queryLabel(first);
  const folded = text.replace(/\s+/g, ' ').trim();
  return folded.length <= 520 ? folded : `${folded.slice(0, 120)} … ${folded.slice(-400)}`; // a message's start and end
}

describe("round trips to PostgreSQL on a lone write's path", function () {
  this.timeout(60_000);
  let s: TestServer;
  let api: InvoicesClient;
  let customerId: string;
  let sent: string[] | null = null;

  before(async () => {
    s = await startTestServer({ env: { INLINE_PROJECTIONS: 'auto' }, roles: ['api', 'projector'] });
    interceptQueries(s.server.runtime.database.pool, (query) => {
      const l = label(query);
      if (sent && !AFTER_WORK.test(l)) sent.push(l);
      return null;
    });
    api = await invoicesClient({ url: s.url, database: s.database });
    customerId = (await api.customer()).id;
    for (let i = 0; i < 3; i++) await api.action((await api.draft(customerId)).id, 'finalize'); // every statement prepared once
  });
  after(() => s?.stop());

  async function roundTrips(request: () => Promise<{ status: number }>, status: number): Promise<string[]> {
    sent = [];
    const res = await request();
    const path = sent;
    sent = null;
    expect(res.status).to.equal(status);
    return path;
  }

  it('a lone create: the key with the customer, one message; on a remembered key and customer, the message alone', async () => {
    const fresh = (await api.customer()).id; // a customer no request named yet
    for (let i = 0; i < 3; i++) {
      let id = '';
      const path = await roundTrips(async () => {
        const res = await api.create({ customer_id: fresh, issue_date: '2026-03-14', items: [{ description: 'Conseil', quantity: 2, unit_price: 1250.5, tax_rate: 20 }] });
        id = res.body.data?.id;
        return res;
      }, 201);
      const message = path[path.length - 1];
      expect(message).to.match(/^select last_revision, last_transaction, last_position, now\(\) as at from es_append\(/);
      if (i === 0) {
        expect(path, JSON.stringify(path)).to.have.length(2);
        expect(path[0]).to.equal('pipeline-authenticate+customer');
      } else {
        expect(path, JSON.stringify(path)).to.have.length(1);
        expect(message, 'the condition ends the message').to.match(/execute i_[0-9a-f]+\('[0-9a-f-]{36}', '\d+', '[0-9a-f-]{36}', '[0-9a-f]{64}', '[0-9a-f]{64}', \d+\);$/);
      }
      expect((await api.get(id)).body.data.status).to.equal('draft');
    }
  });

  it('a PATCH: the key with the stream and the customer its body names (neither read again), then the append; without a customer, the same', async () => {
    const draft = await api.draft(customerId);
    const other = await api.customer();
    // An edit's append writes its read model after its message (its lines are rewritten): only the reads before it are counted here.
    const reads = (path: string[]) => path.slice(0, path.findIndex((l) => /^begin; select .* from es_append\(/.test(l)));
    const path = await roundTrips(() => api.patch(draft.id, { customer_id: other.id.toUpperCase() }), 200);
    expect(reads(path), JSON.stringify(path)).to.deep.equal(['pipeline-authenticate+invoice']);
    expect((await api.get(draft.id)).body.data.customer.id).to.equal(other.id);
    const notes = await roundTrips(() => api.patch(draft.id, { notes: 'Livraison à Fès' }), 200);
    expect(reads(notes), JSON.stringify(notes)).to.deep.equal(['pipeline-authenticate+invoice']);
    // A customer no one has: "no such customer" from the key's statement, without a read of its own.
    const unknown = await roundTrips(() => api.patch(draft.id, { customer_id: '01a22269-0000-7000-8000-0000000000cc' }), 400);
    expect(unknown, JSON.stringify(unknown)).to.deep.equal(['pipeline-authenticate+invoice']);
  });

  it('a schedule create: the customer with the key, not read again', async () => {
    const body = { customer_id: customerId, frequency: 'monthly', start_date: dayFromToday(40), items: [line()] };
    const path = await roundTrips(() => call(`${s.url}/recurring-invoices`, api.secret, { method: 'POST', body }), 201);
    expect(path[0], JSON.stringify(path)).to.equal('pipeline-authenticate+customer');
    expect(path, JSON.stringify(path)).not.to.include('customers.get');
  });

  it("a lone finalize: the key with the seller, the invoice's stream and its customer, then one message", async () => {
    for (let i = 0; i < 3; i++) {
      const draft = await api.draft(customerId);
      const path = await roundTrips(() => api.action(draft.id, 'finalize'), 200);
      expect(path, JSON.stringify(path)).to.deep.equal(['pipeline-authenticate+invoice', path[1]]);
      expect(path[1]).to.match(/^select count\(pg_advisory_xact_lock/);
    }
  });

  it('a finalize naming its invoice in capitals: the same two round trips (the stream is read with its customer, never after it)', async () => {
    const draft = await api.draft(customerId);
    const path = await roundTrips(() => api.action(draft.id.toUpperCase(), 'finalize'), 200);
    expect(path, JSON.stringify(path)).to.have.length(2);
    expect(path[0]).to.equal('pipeline-authenticate+invoice');
    expect((await api.get(draft.id)).body.data.status).to.equal('finalized');
  });

  it("send, pay and void: the key with the invoice's stream, then the append", async () => {
    const issued = await api.finalized(customerId);
    const voided = await api.finalized(customerId);
    for (const [id, name, body] of [[issued.id, 'send', undefined], [issued.id, 'pay', {}], [voided.id, 'void', { reason: 'Erreur de saisie' }]] as const) {
      const path = await roundTrips(() => api.action(id, name, body), 200);
      expect(path, `${name}: ${JSON.stringify(path)}`).to.have.length(2);
      expect(path[0]).to.equal('pipeline-authenticate+invoice');
    }
  });

  it("a finalize whose invoice row names another customer than its stream (a read model behind its log) reads and freezes the stream's", async () => {
    const named = await api.customer({ name: 'Named by the stream', type: 'b2b', ice: '000000000000191' });
    const stale = await api.customer({ name: 'Named by a stale row', type: 'b2b', ice: '000000000000192' });
    const draft = await api.draft(named.id);
    await s.database.db.updateTable('invoices').set({ customer_id: stale.id }).where('id', '=', draft.id).execute();
    const path = await roundTrips(() => api.action(draft.id, 'finalize'), 200);
    expect(path.slice(0, 2), JSON.stringify(path)).to.deep.equal(['pipeline-authenticate+invoice', 'customers.get']);
    const issued = (await api.get(draft.id)).body.data;
    expect([issued.status, issued.customer.id, issued.customer.name]).to.deep.equal(['finalized', named.id, 'Named by the stream']);
  });

  it('a finalize of an invoice the key does not own, or that does not exist, is a 404 from the stream it fetched', async () => {
    const other = await invoicesClient({ url: s.url, database: s.database });
    const theirs = await other.draft((await other.customer()).id);
    for (const id of [theirs.id, '01a22269-0000-7000-8000-000000000000']) {
      const path = await roundTrips(() => api.action(id, 'finalize'), 404);
      expect(path, JSON.stringify(path)).to.deep.equal(['pipeline-authenticate+invoice']);
    }
    expect((await other.get(theirs.id)).body.data.status).to.equal('draft');
  });
});
