/** The PostgreSQL event store on a fresh database, for suites that run against the event store port. */
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { createPostgresEventStore, type PostgresStoreOptions } from '../../src/eventstore/postgres.ts';
import { canonicalBody, sha256Hex } from '../../src/eventstore/chain.ts';
import type { EventStore, NewEvent } from '../../src/eventstore/types.ts';
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

/** An invoice event of `organizationId` carrying `data`, with the metadata the service writes (for the migrations' tests). */
export function eventWithData(organizationId: string, data: unknown): NewEvent {
  return {
    id: uuidv7(),
    type: 'InvoiceUpdated',
    data: data as NewEvent['data'],
    metadata: { organization_id: organizationId, actor: 'key_1', request_id: null, correlation_id: null, causation_id: null, occurred_at: '2026-11-27T10:00:00.000Z' },
  };
}

/** es_append's argument as migrations 0060 to 0103 took it: one JSON array, each event's RFC 8785 text with its digest ("body") first. */
export function eventsAsOneJsonArray(events: NewEvent[]): string {
  return `[${events.map((e) => {
    const body = canonicalBody(e);
    return `{"body":"${sha256Hex(body)}",${body.slice(1)}`;
  }).join(',')}]`;
}

/** `store` with some of its methods replaced (the others bound to it): a fault or a race put where a test needs it. */
export function storeWith(store: EventStore, overrides: Partial<Record<keyof EventStore, unknown>>): EventStore {
  return new Proxy(store, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof EventStore];
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
