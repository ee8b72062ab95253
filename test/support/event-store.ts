/** The PostgreSQL event store on a fresh database, for suites that run against the event store port. */
import { sql } from 'kysely';
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

/** es_append's argument types as PostgreSQL names them (what the migrations that replace it are checked against). */
export async function esAppendSignature(database: TestDatabase): Promise<string> {
  const { rows } = await sql<{ a: string }>`select pg_get_function_identity_arguments('es_append'::regproc) as a`.execute(database.db);
  return rows[0].a;
}
