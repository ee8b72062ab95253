import { createEventStoreDBEventStore } from '../../src/eventstore/esdb.ts';
import { freshPostgresStore } from '../support/event-store.ts';
import { runReservationProtocol } from './protocol.ts';

runReservationProtocol('postgres', freshPostgresStore);

const url = process.env.EVENTSTORE_URL;
if (url) {
  runReservationProtocol('eventstoredb', async () => {
    const store = await createEventStoreDBEventStore(url);
    return { store, cleanup: () => store.close() };
  });
}
