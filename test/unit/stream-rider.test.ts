/**
 * The store view of src/eventstore/stream-rider.ts: what a request's first read of its invoice's stream is
 * answered with (the events its key's statement brought), and what goes to the store. The statement itself
 * runs in every HTTP suite that finalizes, sends, pays, voids or edits an invoice;
 * test/invoices/round-trips.test.ts counts the round trips it saves.
 */
import { expect } from 'chai';
import { withStreamRead } from '../../src/eventstore/stream-rider.ts';
import type { EventStore, ReadStreamOptions, RecordedEvent } from '../../src/eventstore/types.ts';

const event = (revision: number): RecordedEvent => ({
  id: `e${revision}`, stream: 'invoice-a', revision, type: 'InvoiceCreated', data: {}, metadata: {} as RecordedEvent['metadata'],
  position: `p${revision}`, hash: 'h', created_at: new Date(0), inlineProjectors: 0,
});

/** A store that records the reads that reached it, and whether it was closed. */
function recordingStore(): EventStore & { reads: string[]; closed: boolean } {
  const store = {
    kind: 'postgres',
    reads: [] as string[],
    closed: false,
    async readStream(name: string, options?: ReadStreamOptions) {
      store.reads.push(`${name} ${JSON.stringify(options ?? {})}`);
      return [event(0), event(1), event(2)];
    },
    async close() {
      store.closed = true;
    },
  };
  return store as unknown as EventStore & { reads: string[]; closed: boolean };
}

describe('stream rider: the store view of a request', () => {
  it("answers the first whole read of its stream with the fetched events; later reads, other streams and partial reads go to the store", async () => {
    const store = recordingStore();
    const view = withStreamRead(store, 'invoice-a', [event(0)]);
    expect((await view.readStream('invoice-a')).map((e) => e.revision)).to.deep.equal([0]);
    expect(store.reads).to.deep.equal([]);
    // A retry after a conflict reads what is stored now.
    expect((await view.readStream('invoice-a')).map((e) => e.revision)).to.deep.equal([0, 1, 2]);
    await view.readStream('invoice-b');
    expect(store.reads).to.deep.equal(['invoice-a {}', 'invoice-b {}']);
  });

  it('a read from a revision, backwards or bounded is not the whole stream: the store answers it', async () => {
    for (const options of [{ fromRevision: 1 }, { direction: 'backwards' as const }, { maxCount: 1 }]) {
      const store = recordingStore();
      await withStreamRead(store, 'invoice-a', [event(0)]).readStream('invoice-a', options);
      expect(store.reads).to.deep.equal([`invoice-a ${JSON.stringify(options)}`]);
    }
  });

  it('names the store it came from (per-store state is kept for that one) and closes nothing of it', async () => {
    const store = recordingStore();
    const view = withStreamRead(withStreamRead(store, 'invoice-a', []), 'invoice-b', []);
    expect(view.origin).to.equal(store);
    await view.close();
    expect(store.closed).to.equal(false);
  });
});
