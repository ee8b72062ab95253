import { createEventStoreDBEventStore } from '../../src/eventstore/esdb.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { freshDatabase } from '../support/database.ts';
import { runReservationProtocol } from './protocol.ts';

runReservationProtocol('postgres', async () => {
  const database = await freshDatabase();
  const store = await createPostgresEventStore(database.pool);
  return {
    store,
    async cleanup() {
      await store.close();
      await database.drop();
    },
  };
});

const url = process.env.EVENTSTORE_URL;
if (url) {
  runReservationProtocol('eventstoredb', async () => {
    const store = await createEventStoreDBEventStore(url);
    return { store, cleanup: () => store.close() };
  });
}
