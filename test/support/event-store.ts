/** The PostgreSQL event store on a fresh database, for suites that run against the event store port. */
import { createPostgresEventStore, type PostgresStoreOptions } from '../../src/eventstore/postgres.ts';
import type { EventStore } from '../../src/eventstore/types.ts';
import { freshDatabase, type TestDatabase } from './database.ts';

export interface PostgresStoreSetup {
  database: TestDatabase;
  store: EventStore;
  /** Closes the store and drops the database. */
  cleanup(): Promise<void>;
}

export async function freshPostgresStore(options: PostgresStoreOptions = {}): Promise<PostgresStoreSetup> {
  const database = await freshDatabase();
  const store = await createPostgresEventStore(database.pool, undefined, options);
  return {
    database,
    store,
    async cleanup() {
      await store.close();
      await database.drop();
    },
  };
}
