import { expect } from 'chai';
import { LogTail } from '../../src/eventstore/log-tail.ts';
import { Notifier } from '../../src/eventstore/notifier.ts';
import { subscribeByPolling } from '../../src/eventstore/polling-subscription.ts';
import { appendInTransaction, createPostgresEventStore, readAllFrom } from '../../src/eventstore/postgres.ts';
import type { EventStore, RecordedEvent, Subscription } from '../../src/eventstore/types.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { newEvent, streamName, waitFor } from './contract.ts';

/**
 * The shared reader of the log's tail (src/eventstore/log-tail.ts), on a real
 * database: several subscriptions of one process behind one LogTail, with
 * the store's reads counted so the sharing itself is checked.
 */
describe('LogTail: one reader of the log for all subscriptions of a process', function () {
  let database: TestDatabase;
  let store: EventStore;
  let notifier: Notifier;
  let tail: LogTail;
  let subs: Subscription[];
  const reads = { tail: 0, direct: 0 };
  const errors: unknown[] = [];

  /**
   * The store's readAll, counted when a read returns: a read is only sure to see
   * what committed before it ran, and under load it may wait for a connection.
   */
  const counted = (kind: keyof typeof reads) => async (after: string | null, n: number) => {
    const events = await readAllFrom(database.pool, after, n);
    reads[kind]++;
    return events;
  };

  async function setup(capacity: number): Promise<void> {
    database = await freshDatabase();
    store = await createPostgresEventStore(database.pool, database.url);
    notifier = new Notifier(database.url, 'es_appended');
    reads.tail = reads.direct = 0;
    tail = new LogTail({
      read: counted('tail'),
      notifier,
      capacity,
      batchSize: 200,
    });
    subs = [];
  }

  function follow(after: string | null, batchSize: number, slowMs = 0): RecordedEvent[] {
    const seen: RecordedEvent[] = [];
    subs.push(
      subscribeByPolling({
        after,
        batchSize,
        tail,
        read: counted('direct'),
        handler: async (batch) => {
          if (slowMs) await new Promise((r) => setTimeout(r, slowMs));
          seen.push(...batch);
        },
        onError: (err) => errors.push(err),
      }),
    );
    return seen;
  }

  async function whole(): Promise<string[]> {
    const all: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page = await store.readAll(after, 1000);
      if (page.length === 0) return all;
      all.push(...page.map((e) => e.id));
      after = page[page.length - 1].position;
    }
  }

  afterEach(async function () {
    await Promise.all(subs.map((s) => s.stop()));
    expect(errors, 'subscription errors').to.deep.equal([]);
    await tail.close();
    await notifier.close();
    await store.close();
    await database.drop();
  });

  it('gives six subscriptions every event once, in log order, under concurrent writers and a late commit', async function () {
    this.timeout(60_000);
    await setup(10_000);
    const seen = Array.from({ length: 6 }, () => follow(null, 50));
    const client = await database.pool.connect();
    await client.query('begin');
    const late = newEvent('Late');
    await appendInTransaction(client, streamName(), [late], 'no_stream');
    // 16 writers, 50 appends each, while one transaction stays open.
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        const stream = streamName();
        for (let i = 0; i < 50; i++) await store.appendToStream(stream, [newEvent('E', { i })], i === 0 ? 'no_stream' : i - 1);
      }),
    );
    // While a notified position is not readable yet the tail keeps reading: three of its reads
    // after every writer committed, and still nothing delivered.
    const tailReads = reads.tail;
    await waitFor(() => reads.tail >= tailReads + 3, 'three more reads of the tail');
    for (const s of seen) expect(s.length, 'nobody passes the open transaction').to.equal(0);
    await client.query('commit');
    client.release();
    const expected = await whole();
    expect(expected).to.have.length(801);
    await waitFor(() => seen.every((s) => s.length >= 801), 'every subscription at the end');
    // A marker appended last: whatever a subscription would deliver twice comes before it.
    const marker = newEvent('Marker');
    await store.appendToStream(streamName(), [marker], 'no_stream');
    await waitFor(() => seen.every((s) => s.some((e) => e.id === marker.id)), 'the marker everywhere');
    for (const s of seen) expect(s.map((e) => e.id)).to.deep.equal([...expected, marker.id]);
  });

  it('reads the store once per new batch for all of them, not once per subscription', async function () {
    this.timeout(60_000);
    await setup(10_000);
    await store.appendToStream(streamName(), [newEvent('First')], 'no_stream');
    const seen = Array.from({ length: 6 }, () => follow(null, 50));
    await waitFor(() => seen.every((s) => s.length === 1), 'the first event everywhere');
    const before = { ...reads };
    const stream = streamName();
    for (let i = 0; i < 30; i++) {
      await store.appendToStream(stream, [newEvent('E', { i })], i === 0 ? 'no_stream' : i - 1);
      await waitFor(() => seen.every((s) => s.length === i + 2), `event ${i} everywhere`);
    }
    expect(reads.direct - before.direct, 'subscriptions at the end read nothing themselves').to.equal(0);
    // One read finds each event (plus the odd empty one); six own readers would need 180.
    expect(reads.tail - before.tail).to.be.within(30, 90);
  });

  it('does not spin on the store for a subscription behind a stretch that an open transaction precedes', async function () {
    await setup(1000);
    const client = await database.pool.connect();
    await client.query('begin');
    await appendInTransaction(client, streamName(), [newEvent('Held')], 'no_stream');
    const after = (await store.appendToStream(streamName(), [newEvent('After')], 'no_stream')).position;
    follow(after, 10); // subscribing from an append's position anchors the stretch there
    await waitFor(() => reads.tail >= 1, 'the tail reading from its anchor');
    const before = reads.direct;
    const fromStart = follow(null, 10); // behind the stretch, and the store has nothing readable for it yet
    // The tail keeps reading (a notified position is not readable): measure over three of its reads.
    const tailReads = reads.tail;
    await waitFor(() => reads.tail >= tailReads + 3, 'three more reads of the tail');
    const spent = reads.direct - before;
    await client.query('commit');
    client.release();
    expect(spent, 'store reads of the subscription behind the stretch while the tail read three times (it used to loop: thousands)').to.be.below(20);
    await waitFor(() => fromStart.length >= 2, 'both events once the transaction commits');
  });

  it('lets a slow subscription fall out of a small window and catch up from the store, missing nothing', async function () {
    this.timeout(60_000);
    await setup(100);
    const fast = follow(null, 200);
    const slow = follow(null, 10, 5);
    const stream = streamName();
    for (let i = 0; i < 600; i += 20) {
      await store.appendToStream(stream, Array.from({ length: 20 }, (_, k) => newEvent('E', { n: i + k })), i === 0 ? 'no_stream' : i - 1);
    }
    const expected = await whole();
    await waitFor(() => fast.length >= 600 && slow.length >= 600, 'both at the end', 30_000);
    expect(fast.map((e) => e.id)).to.deep.equal(expected);
    expect(slow.map((e) => e.id)).to.deep.equal(expected);
    expect(reads.direct, 'the slow one read the store while outside the window').to.be.greaterThan(2);
    // A newcomer from the start after the window moved on gets the whole log too.
    const late = follow(null, 100);
    await waitFor(() => late.length >= 600, 'the newcomer');
    expect(late.map((e) => e.id)).to.deep.equal(expected);
  });
});
