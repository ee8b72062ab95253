/**
 * A log consumer behind the process's shared tail reads only its own event
 * types (readTypesFrom, SubscribeOptions.types): the matching events, and at
 * the end of a short page a `$checkpoint` marker at the newest readable
 * position, so its checkpoint passes what it skipped.
 */
import { expect } from 'chai';
import { CHECKPOINT_MARKER, createPostgresEventStore, readAllFrom, readTypesFrom } from '../../src/eventstore/postgres.ts';
import type { EventStore, RecordedEvent } from '../../src/eventstore/types.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { newEvent, streamName, waitFor } from './contract.ts';

describe('PostgreSQL event store: reads filtered by event type', function () {
  let database: TestDatabase;
  let store: EventStore;

  before(async () => {
    database = await freshDatabase();
    store = await createPostgresEventStore(database.pool, database.url);
    for (let i = 0; i < 30; i++) await store.appendToStream(streamName(), [newEvent(i % 10 === 0 ? 'Wanted' : 'Other', { i })], 'no_stream');
  });
  after(async () => {
    await store.close();
    await database.drop();
  });

  it('returns only the wanted types, then a marker at the head', async () => {
    const all = await readAllFrom(database.pool, null, 100);
    const page = await readTypesFrom(database.pool, null, 100, ['Wanted']);
    expect(page.map((e) => e.type)).to.deep.equal(['Wanted', 'Wanted', 'Wanted', CHECKPOINT_MARKER]);
    expect(page.slice(0, 3).map((e) => (e.data as { i: number }).i)).to.deep.equal([0, 10, 20]);
    expect(page[3].position).to.equal(all.at(-1)!.position);
    expect(page[3].data).to.equal(null);
    // At the head: nothing more, not even a marker.
    expect(await readTypesFrom(database.pool, page[3].position, 100, ['Wanted'])).to.deep.equal([]);
  });

  it('a full page carries no marker (there may be more of its types)', async () => {
    const page = await readTypesFrom(database.pool, null, 2, ['Wanted']);
    expect(page.map((e) => e.type)).to.deep.equal(['Wanted', 'Wanted']);
  });

  it('a subscription with types sees its events and reaches the head past the others', async () => {
    const seen: RecordedEvent[] = [];
    const sub = store.subscribeToAll(null, async (batch) => void seen.push(...batch), { types: ['Wanted'], batchSize: 2 });
    const head = await store.headPosition();
    try {
      await waitFor(() => seen.length > 0 && seen.at(-1)!.position === head, 'the head');
    } finally {
      await sub.stop();
    }
    expect(seen.filter((e) => e.type === 'Wanted').map((e) => (e.data as { i: number }).i)).to.deep.equal([0, 10, 20]);
    expect(seen.every((e) => e.type === 'Wanted' || e.type === CHECKPOINT_MARKER)).to.equal(true);
  });
});
