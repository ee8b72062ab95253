import { createEventStoreDBEventStore } from '../../src/eventstore/esdb.ts';
import { runEventStoreContract } from './contract.ts';

const url = process.env.EVENTSTORE_URL;

if (url) {
  runEventStoreContract('eventstoredb', async () => {
    const store = await createEventStoreDBEventStore(url);
    return { store, cleanup: () => store.close() };
  });
} else {
  describe.skip('event store contract: eventstoredb', function () {
    it('EventStoreDB contract suite skipped: set EVENTSTORE_URL=esdb://... to run it', function () {});
  });
}
