import { expect } from 'chai';
import pg from 'pg';
import { appendInTransaction, createPostgresEventStore, type PostgresStoreOptions } from '../../src/eventstore/postgres.ts';
import { comparePositions, InlineProjectionError, WrongExpectedVersionError, type RecordedEvent } from '../../src/eventstore/types.ts';
import { freshDatabase } from '../support/database.ts';
import { freshPostgresStore } from '../support/event-store.ts';
import { newEvent, runEventStoreContract, streamName, waitFor, type ContractSetup } from './contract.ts';

async function postgresSetup(options: PostgresStoreOptions = {}): Promise<ContractSetup> {
  const { database, store, cleanup } = await freshPostgresStore(options);
  let queries = 0;
  database.pool.on('acquire', () => queries++);
  return {
    store,
    cleanup,
    queries: () => queries,
    async holdOpenTransaction(stream, events, expected) {
      const client = await database.pool.connect();
      client.on('error', () => {}); // terminated by drop() when a failed test left it open
      let done = false;
      const finish = async (sql: 'commit' | 'rollback') => {
        if (done) return;
        done = true;
        try {
          await client.query(sql);
        } finally {
          client.release();
        }
      };
      await client.query('begin');
      try {
        const result = await appendInTransaction(client, stream, events, expected);
        return { result, commit: () => finish('commit'), rollback: () => finish('rollback') };
      } catch (err) {
        await finish('rollback');
        throw err;
      }
    },
  };
}

runEventStoreContract('postgres', () => postgresSetup());

// Every append through the inline path (BEGIN + es_append, a projection's statement on the same
// connection, COMMIT; docs/architecture.md "Inline projections"): the same contract holds.
runEventStoreContract('postgres with an inline projection of every event', () =>
  postgresSetup({
    inline: {
      handles: () => true,
      mark: 1,
      // An opening statement rides in the append's message, in its transaction; apply is told it ran, and
      // finds its mark (else it refuses the append, and the contract's appends fail).
      opening: (events, literal) => `select set_config('invoicing_test.opened', ${literal(events[0].id)}, true)`,
      async apply(events, client, opened) {
        const { rows } = await client.query("select current_setting('invoicing_test.opened', true) as mark");
        if (!opened || rows[0].mark !== events[0].id) throw new Error('the opening statement did not run in the append transaction');
        await client.query('select $1::int as n', [events.length]);
      },
      statements: () => null,
    },
  }),
);

// Every append with its projection's whole write in the append's own message (BEGIN, es_append, the
// statements, COMMIT; InlineProjections.statements): a statement in text sets a transaction-local mark, and a
// prepared one (prepared once per connection, run with EXECUTE) divides by zero unless it finds that mark, so
// an append whose statements ran out of order, outside its transaction or not at all fails the contract.
const committedInOneMessage = new Set<string>();
runEventStoreContract('postgres with an inline projection written in the append message', () =>
  postgresSetup({
    inline: {
      handles: () => true,
      mark: 1,
      opening: () => {
        throw new Error('opening() is not called when statements() answers');
      },
      async apply() {
        throw new Error('apply() is not called when statements() answers');
      },
      statements: (events, literal) => ({
        statements: [
          { text: `select set_config('invoicing_test.mark', ${literal(events[0].id)}, true)` },
          { sql: "select 1 / (current_setting('invoicing_test.mark', true) = $1::text)::int as checked", args: [literal(events[0].id)] },
        ],
        committed: (recorded) => recorded.forEach((e) => committedInOneMessage.add(e.id)),
        refused: () => {},
      }),
    },
  }),
);

describe('postgres event store: an append of events stored before', function () {
  it('answers as then and says so (replayed), so a command answers what is stored, not what it decided again', async function () {
    const { store, cleanup } = await freshPostgresStore();
    try {
      const stream = streamName();
      const event = newEvent('X');
      const first = await store.appendToStream(stream, [event], 'no_stream');
      expect(first.replayed).to.equal(undefined);
      const again = await store.appendToStream(stream, [{ ...event, data: { decided: 'again' } }], 'no_stream');
      expect(again).to.deep.equal({ ...first, replayed: true });
      expect((await store.readStream(stream)).map((e) => e.data)).to.deep.equal([event.data]);
    } finally {
      await cleanup();
    }
  });
});

describe('postgres event store: the reads every write is followed by', function () {
  it('read the log and a stream through named statements, planned once per connection', async function () {
    // The log's tail is read after every lone write, and every command on a stream reads it first: their
    // parsing and planning cost more than running them (docs/performance.md "The log's tail read as a named statement").
    const database = await freshDatabase();
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    const store = await createPostgresEventStore(pool);
    try {
      const stream = streamName();
      await store.appendToStream(stream, [newEvent('X')], 'no_stream');
      for (let i = 0; i < 2; i++) {
        expect((await store.readAll(null, 500)).map((e) => e.stream)).to.include(stream);
        expect(await store.readStream(stream)).to.have.length(1);
      }
      const { rows } = await pool.query('select name from pg_prepared_statements order by name');
      expect(rows.map((r) => r.name)).to.include.members(['es_read_all', 'es_read_stream']);
    } finally {
      await store.close();
      await pool.end();
      await database.drop();
    }
  });
});

describe('postgres event store: an inline write in the append message', function () {
  it('writes its statements with the events, records what committed, and refuses the append with InlineProjectionError when a statement fails', async function () {
    let failures = 0;
    let fail = false;
    const { store, database, cleanup } = await freshPostgresStore({
      inline: {
        handles: () => true,
        mark: 1,
        opening: () => null,
        async apply() {},
        statements: (events, literal) => ({
          statements: [{ sql: 'insert into inline_test_rows (event_id, n) values ($1::uuid, 1 / $2::int)', args: [literal(events[0].id), literal(fail ? '0' : '1')] }],
          committed: (recorded) => recorded.forEach((e) => committedInOneMessage.add(e.id)),
          refused: (_err, inProjection) => inProjection && failures++,
        }),
      },
    });
    const rows = async () => (await database.pool.query('select event_id from inline_test_rows')).rows.map((r) => r.event_id);
    try {
      await database.pool.query('create table inline_test_rows (event_id uuid primary key, n int)');
      const stream = streamName();
      const first = newEvent('X');
      await store.appendToStream(stream, [first], 'no_stream');
      expect(committedInOneMessage.has(first.id), 'committed() got the appended event').to.equal(true);
      expect(await rows(), 'the statement ran and committed with the event').to.deep.equal([first.id]);
      fail = true;
      const second = newEvent('X');
      let error: unknown;
      try {
        await store.appendToStream(stream, [second], 0);
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(InlineProjectionError);
      expect(String((error as InlineProjectionError).cause)).to.include('division by zero');
      expect(failures, 'failed() was told (the alert)').to.equal(1);
      expect(committedInOneMessage.has(second.id)).to.equal(false);
      expect((await store.readStream(stream)).map((e) => e.id), 'nothing of the refused append is stored').to.deep.equal([first.id]);
      // A conflict in es_append is still a conflict, not a projection failure.
      let conflict: unknown;
      try {
        await store.appendToStream(stream, [newEvent('X')], 5);
      } catch (err) {
        conflict = err;
      }
      expect(conflict).to.be.instanceOf(WrongExpectedVersionError);
      expect(failures).to.equal(1);
      expect(await rows(), 'no row of a refused append').to.deep.equal([first.id]);
    } finally {
      await cleanup();
    }
  });
});

describe('postgres event store: a transaction that commits late', function () {
  let ctx: ContractSetup;

  beforeEach(async function () {
    ctx = await postgresSetup();
  });

  afterEach(async function () {
    await ctx?.cleanup();
  });

  const ids = (events: RecordedEvent[]) => events.map((e) => e.id);

  it('is never skipped: readers do not pass position 1 while it is open and position 2 has committed', async function () {
    const { store } = ctx;
    const w = newEvent('W');
    const x = newEvent('X');
    const y = newEvent('Y');

    // A consumer that has already handled something, so its checkpoint is not null.
    await store.appendToStream(streamName(), [w], 'no_stream');
    const seen: RecordedEvent[] = [];
    const sub = store.subscribeToAll(null, async (batch) => {
      seen.push(...batch);
    });
    const open = await ctx.holdOpenTransaction!(streamName(), [x], 'no_stream');
    try {
      await waitFor(() => seen.length >= 1, 'the first event');
      const page0 = await store.readAll(null, 100);
      expect(ids(page0)).to.deep.equal([w.id]);
      const checkpoint = page0[0].position;

      // Client B commits position 2 while A (position 1) is still open.
      const ry = await store.appendToStream(streamName(), [y], 'no_stream');
      expect(comparePositions(open.result.position, ry.position), 'the open transaction sorts first').to.equal(-1);

      const page1 = await store.readAll(checkpoint, 100);
      expect(ids(page1), 'readAll must not pass the open transaction').to.deep.equal([]);
      expect(await store.headPosition(), 'headPosition must not pass the open transaction').to.equal(checkpoint);
      // The store keeps reading while a notified position is not readable: five of its queries, and still only w.
      const queries = ctx.queries!();
      await waitFor(() => ctx.queries!() >= queries + 5, 'five more reads of the log');
      expect(ids(seen), 'the subscription must not pass the open transaction').to.deep.equal([w.id]);

      await open.commit();

      const page2 = await store.readAll(checkpoint, 100);
      expect(ids(page2), 'readAll after commit').to.deep.equal([x.id, y.id]);
      await waitFor(() => seen.length >= 3, 'both late events on the subscription');
      expect(await store.headPosition()).to.equal(ry.position);
      const marker = newEvent('Marker'); // appended last: a duplicate would come before it
      await store.appendToStream(streamName(), [marker], 'no_stream');
      await waitFor(() => seen.some((e) => e.id === marker.id), 'the marker');
      expect(ids(seen), 'subscription after commit').to.deep.equal([w.id, x.id, y.id, marker.id]);
    } finally {
      await open.rollback(); // no-op once committed
      await sub.stop();
    }
  });

  it('a rolled back transaction leaves no trace and holds no one back afterwards', async function () {
    const { store } = ctx;
    const x = newEvent('X');
    const y = newEvent('Y');
    const seen: RecordedEvent[] = [];
    const sub = store.subscribeToAll(null, async (batch) => {
      seen.push(...batch);
    });
    const open = await ctx.holdOpenTransaction!(streamName(), [x], 'no_stream');
    try {
      await store.appendToStream(streamName(), [y], 'no_stream');
      expect(await store.readAll(null, 100)).to.deep.equal([]);
      await open.rollback();
      expect(ids(await store.readAll(null, 100))).to.deep.equal([y.id]);
      await waitFor(() => seen.length >= 1, 'the committed event');
      const marker = newEvent('Marker'); // appended last: the rolled back event would come before it
      await store.appendToStream(streamName(), [marker], 'no_stream');
      await waitFor(() => seen.some((e) => e.id === marker.id), 'the marker');
      expect(ids(seen)).to.deep.equal([y.id, marker.id]);
    } finally {
      await open.rollback(); // no-op when already rolled back
      await sub.stop();
    }
  });
});

describe('postgres event store: an inline projection whose opening throws', function () {
  it('refuses the append with InlineProjectionError, stores nothing, and keeps no connection', async function () {
    const { database, store, cleanup } = await freshPostgresStore({
      inline: {
        handles: () => true,
        mark: 1,
        opening: () => {
          throw new Error('projector bug in opening (test)');
        },
        async apply() {},
        statements: () => null,
      },
    });
    try {
      const stream = streamName();
      for (let i = 0; i < 3; i++) {
        let error: unknown;
        try {
          await store.appendToStream(stream, [newEvent('X')], 'no_stream');
        } catch (err) {
          error = err;
        }
        expect(error, 'each append refused').to.be.instanceOf(InlineProjectionError);
        expect(String((error as InlineProjectionError).cause)).to.include('projector bug in opening');
      }
      expect(await store.readStream(stream)).to.deep.equal([]);
      // Refused before a connection was taken: every pooled connection is idle.
      expect(database.pool.totalCount - database.pool.idleCount).to.equal(0);
    } finally {
      await cleanup();
    }
  });
});
