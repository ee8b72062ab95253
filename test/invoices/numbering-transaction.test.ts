/**
 * Numbers given in the invoices' own transaction (InvoiceNumbering.assignWithin,
 * the PostgreSQL path of finalize): a batch of waiting finalizes commits in one
 * appendToStreams, and an invoice whose stream moved under the batch is
 * refused alone, without a gap or a lost number for the others.
 */
import { expect } from 'chai';
import { v4 as uuid } from 'uuid';
import { InvoiceNumbering } from '../../src/commands/invoicenumber/handler.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { WrongExpectedVersionError, type EventStore, type NewEvent, type StreamAppend } from '../../src/eventstore/types.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';

describe('invoice numbering in the invoices\' transaction (assignWithin)', function () {
  this.timeout(60_000);
  let t: TestDatabase;
  let store: EventStore;
  const calls: number[] = []; // streams per appendToStreams call

  before(async () => {
    t = await freshDatabase();
    store = await createPostgresEventStore(t.pool, t.url);
    const appendMany = store.appendToStreams!.bind(store);
    store.appendToStreams = (appends: StreamAppend[]) => {
      calls.push(appends.length);
      return appendMany(appends);
    };
  });
  after(async () => {
    await store?.close();
    await t?.drop();
  });

  const metadata = (organizationId: string) => ({ organization_id: organizationId, actor: 'test', request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date().toISOString() });
  const numbered = (number: string, organizationId: string): NewEvent => ({ id: uuid(), type: 'TestNumbered', data: { number }, metadata: metadata(organizationId) });

  it('a batch in which one invoice\'s stream moved: the others commit with consecutive numbers, that one is refused alone', async () => {
    const org = uuid();
    const numbering = new InvoiceNumbering(store);
    const [a, b, c, d] = [uuid(), uuid(), uuid(), uuid()];
    // c's stream exists already: its append below expects no stream, as a finalize whose invoice was just edited.
    await store.appendToStream(`test-${c}`, [numbered('none', org)], 'no_stream');
    const within = (invoiceId: string) =>
      numbering.assignWithin(org, 2026, invoiceId, metadata(org), { stream: `test-${invoiceId}`, expected: 'no_stream', events: (number) => [numbered(number, org)] });
    // a goes out alone; b, c and d queue behind it and go out as one batch.
    const outcomes = await Promise.allSettled([within(a), within(b), within(c), within(d)]);

    expect(calls.slice(0, 3), 'a alone; b, c and d together; b and d again together, each with the number stream').to.deep.equal([2, 4, 3]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value.number : 'refused'))).to.deep.equal(['INV-2026-000001', 'INV-2026-000002', 'refused', 'INV-2026-000003']);
    const refused = (outcomes[2] as PromiseRejectedResult).reason;
    expect(refused).to.be.instanceOf(WrongExpectedVersionError);
    expect(refused.stream).to.equal(`test-${c}`);

    // The number stream holds exactly 1, 2, 3; each invoice stream holds its own number; c's is untouched.
    const numbers = await store.readStream(`invoicenumbers-${org}-2026`);
    expect(numbers.map((e) => [(e.data as any).invoice_id, (e.data as any).sequence])).to.deep.equal([[a, 1], [b, 2], [d, 3]]);
    for (const [id, number] of [[a, 'INV-2026-000001'], [b, 'INV-2026-000002'], [d, 'INV-2026-000003']]) {
      expect((await store.readStream(`test-${id}`)).map((e) => (e.data as any).number)).to.deep.equal([number]);
    }
    expect((await store.readStream(`test-${c}`)).map((e) => (e.data as any).number)).to.deep.equal(['none']);

    // The cache survived the refusal: the next number follows without a gap.
    expect((await within(uuid())).number).to.equal('INV-2026-000004');
  });

  it('an invoice whose completion cannot be decided fails alone: its batch goes again one at a time, without a gap', async () => {
    const org = uuid();
    const numbering = new InvoiceNumbering(store);
    const ids = [uuid(), uuid(), uuid(), uuid()];
    const within = (invoiceId: string, broken = false) =>
      numbering.assignWithin(org, 2026, invoiceId, metadata(org), {
        stream: `test-${invoiceId}`,
        expected: 'no_stream',
        events(number) {
          if (broken) throw new Error('cannot complete (test)');
          return [numbered(number, org)];
        },
      });
    const outcomes = await Promise.allSettled([within(ids[0]), within(ids[1]), within(ids[2], true), within(ids[3])]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value.number : (o.reason as Error).message))).to.deep.equal([
      'INV-2026-000001',
      'INV-2026-000002',
      'cannot complete (test)',
      'INV-2026-000003',
    ]);
    const numbers = await store.readStream(`invoicenumbers-${org}-2026`);
    expect(numbers.map((e) => [(e.data as any).invoice_id, (e.data as any).sequence])).to.deep.equal([[ids[0], 1], [ids[1], 2], [ids[3], 3]]);
  });

  it('a number already given to the invoice is reused and appended with the invoice alone', async () => {
    const org = uuid();
    const numbering = new InvoiceNumbering(store);
    const id = uuid();
    expect(await numbering.assign(org, 2026, id, metadata(org))).to.equal('INV-2026-000001'); // given, not yet on its invoice
    const before = calls.length;
    const { number } = await numbering.assignWithin(org, 2026, id, metadata(org), { stream: `test-${id}`, expected: 'no_stream', events: (n) => [numbered(n, org)] });
    expect(number).to.equal('INV-2026-000001');
    expect(calls.slice(before)).to.deep.equal([1]);
    expect(await store.readStream(`invoicenumbers-${org}-2026`)).to.have.length(1);
  });
});
