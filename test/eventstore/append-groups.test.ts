/**
 * Creations in groups (src/eventstore/append-groups.ts): creations that
 * arrive while a group is being written go together in the next one, one
 * transaction with their inline rows; a group that fails as a whole is
 * retried append by append, so each gets its own answer and the others are
 * written. Against a real PostgreSQL store, and the contract suite with
 * every creation grouped.
 */
import { expect } from 'chai';
import type { PostgresStoreOptions } from '../../src/eventstore/postgres.ts';
import { InlineProjectionError, WrongExpectedVersionError, type AppendResult } from '../../src/eventstore/types.ts';
import { freshPostgresStore } from '../support/event-store.ts';
import { newEvent, runEventStoreContract, streamName } from './contract.ts';

/** Refused inline messages: how many events each had, and whether a projection's statement failed. */
const refusals: { events: number; inProjection: boolean; grouped: boolean }[] = [];

/** An inline projection that writes a row per event in the append's message, and fails on an event whose data says `fail`. */
function rowPerEvent(): PostgresStoreOptions['inline'] {
  return {
    handles: () => true,
    mark: 1,
    opening: () => null,
    async apply() {
      throw new Error('apply() is not called when statements() answers');
    },
    statements: (events, literal, grouped = false) => ({
      statements: [
        {
          sql: 'insert into grouped_rows (event_id, stream, n) select e, s, 1 / f from unnest($1::uuid[], $2::text[], $3::int[]) as t(e, s, f)',
          args: [
            literal(`{${events.map((e) => e.id).join(',')}}`),
            literal(`{${events.map((e) => `"${e.stream}"`).join(',')}}`),
            literal(`{${events.map((e) => ((e.data as { fail?: boolean })?.fail ? 0 : 1)).join(',')}}`),
          ],
        },
      ],
      committed: () => {},
      refused: (_err, inProjection) => void refusals.push({ events: events.length, inProjection, grouped }),
    }),
  };
}

const grouped: PostgresStoreOptions = { inline: rowPerEvent(), groupCreations: () => true };

runEventStoreContract('postgres with every creation in a group', async () => {
  const setup = await freshPostgresStore(grouped);
  await setup.database.pool.query('create table grouped_rows (event_id uuid primary key, stream text not null, n int)');
  return { store: setup.store, cleanup: setup.cleanup };
});

describe('postgres event store: creations in groups', function () {
  let setup: Awaited<ReturnType<typeof freshPostgresStore>>;
  beforeEach(async () => {
    setup = await freshPostgresStore(grouped);
    await setup.database.pool.query('create table grouped_rows (event_id uuid primary key, stream text not null, n int)');
  });
  afterEach(() => setup.cleanup());

  const rowsOf = async (streams: string[]) =>
    (await setup.database.pool.query('select stream from grouped_rows where stream = any($1::text[]) order by stream', [streams])).rows.map((r) => r.stream);
  const transactionsOf = async (streams: string[]) =>
    (await setup.database.pool.query('select count(distinct transaction_id)::int as n from es_events where stream_id = any($1::text[])', [streams])).rows[0].n;

  it('writes creations made together in one transaction, each with its row, each answered its own position', async () => {
    const streams = Array.from({ length: 20 }, () => streamName('grouped'));
    const results = await Promise.all(streams.map((s) => setup.store.appendToStream(s, [newEvent('Created')], 'no_stream')));
    expect(new Set(results.map((r) => r.position)).size, 'one position per append').to.equal(20);
    for (const [i, s] of streams.entries()) {
      const stored = await setup.store.readStream(s);
      expect(stored.map((e) => e.position)).to.deep.equal([results[i].position]);
    }
    expect(await rowsOf(streams)).to.deep.equal([...streams].sort());
    // The first went alone (nothing was in flight); the 19 made meanwhile formed the next group.
    expect(await transactionsOf(streams)).to.equal(2);
    const { rows } = await setup.database.pool.query('select bool_and(applied_inline) as all from es_events where stream_id = any($1::text[])', [streams]);
    expect(rows[0].all).to.equal(true);
  });

  it('answers each member of a failed group as it would be answered alone, and writes the others', async () => {
    const existing = streamName('grouped');
    await setup.store.appendToStream(existing, [newEvent('Created')], 'no_stream');
    const retried = streamName('grouped');
    const retriedEvent = newEvent('Created');
    const first = await setup.store.appendToStream(retried, [retriedEvent], 'no_stream');
    const fresh = Array.from({ length: 6 }, () => streamName('grouped'));
    const failing = streamName('grouped');
    const settle = (p: Promise<AppendResult>) => p.then((r) => ({ ok: r }), (err: unknown) => ({ err }));
    refusals.length = 0;
    // One append in flight; the others queue behind it and go as one group, which fails whole (a stream that
    // exists, an event whose projection fails), and then one by one.
    const lead = settle(setup.store.appendToStream(streamName('grouped'), [newEvent('Created')], 'no_stream'));
    const outcomes = await Promise.all([
      lead,
      settle(setup.store.appendToStream(existing, [newEvent('Created')], 'no_stream')),
      settle(setup.store.appendToStream(failing, [newEvent('Created', { fail: true })], 'no_stream')),
      settle(setup.store.appendToStream(retried, [retriedEvent], 'no_stream')),
      ...fresh.map((s) => settle(setup.store.appendToStream(s, [newEvent('Created')], 'no_stream'))),
    ]);
    expect('ok' in outcomes[0]).to.equal(true);
    expect((outcomes[1] as { err: unknown }).err).to.be.instanceOf(WrongExpectedVersionError);
    expect((outcomes[2] as { err: unknown }).err).to.be.instanceOf(InlineProjectionError);
    expect((outcomes[3] as { ok: AppendResult }).ok, 'an append whose event is stored answers as then').to.deep.equal({ ...first, replayed: true });
    for (const o of outcomes.slice(4)) expect('ok' in o, JSON.stringify(o)).to.equal(true);
    expect(await rowsOf(fresh)).to.deep.equal([...fresh].sort());
    expect(await setup.store.readStream(failing), 'nothing of the refused append').to.deep.equal([]);
    expect(await rowsOf([failing])).to.deep.equal([]);
    expect((await setup.store.readStream(existing)).length).to.equal(1);
    // Those made together went as one group (the lead too, when the append before them had not yet left the
    // queue), which was refused whole (told as a group), then one by one.
    expect(refusals[0]).to.include({ inProjection: false, grouped: true });
    expect(refusals[0].events).to.be.within(9, 10);
    expect(refusals.slice(1).filter((r) => r.grouped)).to.deep.equal([]);
    expect(refusals.find((r) => r.inProjection), 'the failing event refused alone').to.deep.equal({ events: 1, inProjection: true, grouped: false });
    expect(await transactionsOf(fresh), 'the others written one by one after the group failed').to.equal(6);
  });

  it('does not hold every creation behind a group that waits on a lock', async () => {
    const stalled = streamName('grouped');
    const blocker = await setup.database.pool.connect();
    try {
      // The stream's lock (es_append's, namespace "ESAP") held elsewhere: the group holding this stream waits.
      await blocker.query('select pg_advisory_lock(1163084112, hashtext($1))', [stalled]);
      const held = setup.store.appendToStream(stalled, [newEvent('Created')], 'no_stream');
      const others = Array.from({ length: 5 }, () => streamName('grouped'));
      // Written while the first group still waits (after the stall delay, as the next group).
      await Promise.all(others.map((s) => setup.store.appendToStream(s, [newEvent('Created')], 'no_stream')));
      expect(await rowsOf(others)).to.deep.equal([...others].sort());
      expect(await rowsOf([stalled]), 'the stalled one still waits').to.deep.equal([]);
      await blocker.query('select pg_advisory_unlock(1163084112, hashtext($1))', [stalled]);
      await held;
      expect(await rowsOf([stalled])).to.deep.equal([stalled]);
    } finally {
      await blocker.query('select pg_advisory_unlock_all()').catch(() => {});
      blocker.release();
    }
  });
});
