/**
 * The event store contract (DESIGN section 2): every adapter runs these cases.
 * Streams are unique per test and readAll results are filtered to the test's
 * streams, so the suite also runs against a store shared with other tests.
 */
import { expect } from 'chai';
import { v4 as uuid } from 'uuid';
import {
  WrongExpectedVersionError,
  comparePositions,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type RecordedEvent,
} from '../../src/eventstore/types.ts';
import { until } from '../support/wait.ts';
import { describeHashChain, reference } from './chain-contract.ts';

/** An append left uncommitted until commit() (adapters with client-visible transactions). */
export interface OpenTransaction {
  result: AppendResult;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

export interface ContractSetup {
  store: EventStore;
  cleanup(): Promise<void>;
  /** Append inside a transaction held open until commit(); the contract itself does not need it. */
  holdOpenTransaction?: (stream: string, events: NewEvent[], expected: ExpectedRevision) => Promise<OpenTransaction>;
  /** How many queries the store's pool has run so far (PostgreSQL): a signal that it polled. */
  queries?: () => number;
}

export function streamName(category = 'contract'): string {
  return `${category}-${uuid()}`;
}

export function metadata(extra: Partial<EventMetadata> = {}): EventMetadata {
  return {
    organization_id: uuid(),
    actor: 'system',
    request_id: uuid(),
    correlation_id: uuid(),
    causation_id: null,
    occurred_at: new Date().toISOString(),
    ...extra,
  };
}

export function newEvent(type = 'Something', data: unknown = { n: 1 }): NewEvent {
  return { id: uuid(), type, data, metadata: metadata() };
}

export function events(n: number, type = 'Something'): NewEvent[] {
  return Array.from({ length: n }, (_, i) => newEvent(type, { i, label: `event ${i}` }));
}

/** Every event after `after` (paging through readAll), restricted to `streams`. */
export async function readAllOf(
  store: EventStore,
  after: string | null,
  streams: Set<string>,
  pageSize = 500,
): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  let cursor = after;
  for (;;) {
    const page = await store.readAll(cursor, pageSize);
    if (page.length === 0) return out;
    for (const e of page) if (streams.has(e.stream)) out.push(e);
    cursor = page[page.length - 1].position;
  }
}

export async function expectWrongVersion(
  promise: Promise<unknown>,
  stream: string,
  expected: ExpectedRevision,
  actual: number | 'no_stream',
): Promise<void> {
  let error: unknown;
  try {
    await promise;
  } catch (err) {
    error = err;
  }
  expect(error, 'append should have failed').to.be.instanceOf(WrongExpectedVersionError);
  const e = error as WrongExpectedVersionError;
  expect(e.code).to.equal('WRONG_EXPECTED_VERSION');
  expect(e.stream).to.equal(stream);
  expect(e.expected).to.equal(expected);
  expect(e.actual).to.equal(actual);
}

export function waitFor(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  return until(condition, timeoutMs, what, 10);
}

function expectStrictlyIncreasing(events: RecordedEvent[]): void {
  for (let i = 1; i < events.length; i++) {
    expect(comparePositions(events[i - 1].position, events[i].position), `position ${i} after ${i - 1}`).to.equal(-1);
  }
}

function ids(events: { id: string }[]): string[] {
  return events.map((e) => e.id);
}

export function runEventStoreContract(name: string, setup: () => Promise<ContractSetup>): void {
  describe(`event store contract: ${name}`, function () {
    let ctx: ContractSetup;
    let store: EventStore;

    before(async function () {
      ctx = await setup();
      store = ctx.store;
    });

    after(async function () {
      await ctx?.cleanup();
    });

    describeHashChain(() => store, 'contract');

    describe('expected revision', function () {
      it('no_stream creates a new stream', async function () {
        const s = streamName();
        const r = await store.appendToStream(s, events(2), 'no_stream');
        expect(r.nextRevision).to.equal(1);
        expect(r.position).to.be.a('string').and.not.equal('');
        expect(await store.readStream(s)).to.have.length(2);
      });

      it('no_stream on an existing stream fails with its actual revision', async function () {
        const s = streamName();
        await store.appendToStream(s, events(3), 'no_stream');
        await expectWrongVersion(store.appendToStream(s, events(1), 'no_stream'), s, 'no_stream', 2);
        expect(await store.readStream(s)).to.have.length(3);
      });

      it('stream_exists on a missing stream fails with actual no_stream', async function () {
        const s = streamName();
        await expectWrongVersion(store.appendToStream(s, events(1), 'stream_exists'), s, 'stream_exists', 'no_stream');
        expect(await store.readStream(s)).to.deep.equal([]);
      });

      it('stream_exists on an existing stream appends', async function () {
        const s = streamName();
        await store.appendToStream(s, events(1), 'no_stream');
        const r = await store.appendToStream(s, events(2), 'stream_exists');
        expect(r.nextRevision).to.equal(2);
        expect((await store.readStream(s)).map((e) => e.revision)).to.deep.equal([0, 1, 2]);
      });

      it('any appends to a missing and to an existing stream', async function () {
        const s = streamName();
        expect((await store.appendToStream(s, events(1), 'any')).nextRevision).to.equal(0);
        expect((await store.appendToStream(s, events(2), 'any')).nextRevision).to.equal(2);
        expect(await store.readStream(s)).to.have.length(3);
      });

      it('the right revision appends', async function () {
        const s = streamName();
        await store.appendToStream(s, events(1), 'no_stream');
        expect((await store.appendToStream(s, events(2), 0)).nextRevision).to.equal(2);
        expect((await store.appendToStream(s, events(1), 2)).nextRevision).to.equal(3);
        expect((await store.readStream(s)).map((e) => e.revision)).to.deep.equal([0, 1, 2, 3]);
      });

      it('a wrong revision fails with expected and actual, and stores nothing', async function () {
        const s = streamName();
        await store.appendToStream(s, events(3), 'no_stream');
        await expectWrongVersion(store.appendToStream(s, events(1), 1), s, 1, 2);
        await expectWrongVersion(store.appendToStream(s, events(1), 5), s, 5, 2);
        expect(await store.readStream(s)).to.have.length(3);
      });

      it('a revision on a missing stream fails with actual no_stream', async function () {
        const s = streamName();
        await expectWrongVersion(store.appendToStream(s, events(1), 0), s, 0, 'no_stream');
        expect(await store.readStream(s)).to.deep.equal([]);
      });
    });

    describe('idempotent appends', function () {
      it('appending the same event id twice is a no-op', async function () {
        const s = streamName();
        const e = newEvent();
        const first = await store.appendToStream(s, [e], 'no_stream');
        const again = await store.appendToStream(s, [e], 'no_stream');
        expect(again.nextRevision).to.equal(first.nextRevision);
        const again2 = await store.appendToStream(s, [e], 'any');
        expect(again2.nextRevision).to.equal(first.nextRevision);
        const stored = await store.readStream(s);
        expect(ids(stored)).to.deep.equal([e.id]);
      });

      it('retrying a whole batch after success, with its now stale expected revision, is a no-op', async function () {
        const start = await store.headPosition();
        const s = streamName();
        await store.appendToStream(s, events(1), 'no_stream');
        const batch = events(3);
        const first = await store.appendToStream(s, batch, 0);
        expect(first.nextRevision).to.equal(3);
        const retry = await store.appendToStream(s, batch, 0);
        expect(retry.nextRevision).to.equal(3);
        const stored = await store.readStream(s);
        expect(stored).to.have.length(4);
        expect(ids(stored.slice(1))).to.deep.equal(ids(batch));
        const all = await readAllOf(store, start, new Set([s]));
        expect(all).to.have.length(4);
      });
    });

    describe('readStream', function () {
      let s: string;
      let appended: NewEvent[];
      let start: string | null;

      before(async function () {
        start = await store.headPosition();
        s = streamName();
        appended = events(5);
        await store.appendToStream(s, appended, 'no_stream');
      });

      it('reads forwards with every field', async function () {
        const read = await store.readStream(s);
        expect(read.map((e) => e.revision)).to.deep.equal([0, 1, 2, 3, 4]);
        read.forEach((e, i) => {
          expect(e.id).to.equal(appended[i].id);
          expect(e.stream).to.equal(s);
          expect(e.type).to.equal(appended[i].type);
          expect(e.data).to.deep.equal(appended[i].data);
          expect(e.metadata).to.deep.equal(appended[i].metadata);
          expect(e.position).to.be.a('string');
          expect(e.created_at).to.be.instanceOf(Date);
        });
      });

      it('reads backwards', async function () {
        expect((await store.readStream(s, { direction: 'backwards' })).map((e) => e.revision)).to.deep.equal([4, 3, 2, 1, 0]);
      });

      it('reads from a revision, both ways', async function () {
        expect((await store.readStream(s, { fromRevision: 2 })).map((e) => e.revision)).to.deep.equal([2, 3, 4]);
        expect((await store.readStream(s, { fromRevision: 2, direction: 'backwards' })).map((e) => e.revision)).to.deep.equal([
          2, 1, 0,
        ]);
        expect(await store.readStream(s, { fromRevision: 5 })).to.deep.equal([]);
      });

      it('reads at most maxCount events', async function () {
        expect((await store.readStream(s, { maxCount: 2 })).map((e) => e.revision)).to.deep.equal([0, 1]);
        expect((await store.readStream(s, { fromRevision: 1, maxCount: 2 })).map((e) => e.revision)).to.deep.equal([1, 2]);
        expect((await store.readStream(s, { direction: 'backwards', maxCount: 2 })).map((e) => e.revision)).to.deep.equal([
          4, 3,
        ]);
      });

      it('gives [] for a missing stream', async function () {
        expect(await store.readStream(streamName())).to.deep.equal([]);
        expect(await store.readStream(streamName(), { direction: 'backwards' })).to.deep.equal([]);
      });

      it('agrees with readAll on positions', async function () {
        const byStream = await store.readStream(s);
        const viaAll = await readAllOf(store, start, new Set([s]));
        expect(viaAll.map((e) => e.position)).to.deep.equal(byStream.map((e) => e.position));
      });
    });

    describe('global order', function () {
      it('readAll returns events of every stream in append order, positions strictly increasing', async function () {
        const start = await store.headPosition();
        const streams = [streamName(), streamName(), streamName()];
        const expected: string[] = [];
        const revisions = new Map<string, ExpectedRevision>(streams.map((s) => [s, 'no_stream']));
        let lastResult: AppendResult | undefined;
        for (let round = 0; round < 4; round++) {
          for (const s of streams) {
            const batch = events(1 + ((round + expected.length) % 3));
            lastResult = await store.appendToStream(s, batch, revisions.get(s)!);
            revisions.set(s, lastResult.nextRevision);
            expected.push(...ids(batch));
          }
        }
        const all = await readAllOf(store, start, new Set(streams), 7);
        expect(ids(all)).to.deep.equal(expected);
        expectStrictlyIncreasing(all);
        expect(lastResult!.position, 'append result position is the last event position').to.equal(all[all.length - 1].position);
        const head = await store.headPosition();
        expect(comparePositions(head, all[all.length - 1].position)).to.be.at.least(0);
      });

      it('readAll(after) resumes exactly after a checkpoint: nothing twice, nothing skipped', async function () {
        const start = await store.headPosition();
        const streams = [streamName(), streamName()];
        const appended: string[] = [];
        for (let i = 0; i < 10; i++) {
          const batch = events(2);
          await store.appendToStream(streams[i % 2], batch, 'any');
          appended.push(...ids(batch));
        }
        const set = new Set(streams);
        const all = await readAllOf(store, start, set);
        expect(ids(all)).to.deep.equal(appended);
        for (const k of [0, 1, 7, 18, 19]) {
          const rest = await readAllOf(store, all[k].position, set, 3);
          expect(ids(rest), `after event ${k}`).to.deep.equal(appended.slice(k + 1));
        }
        // A small limit pages through the same sequence.
        const page = (await store.readAll(all[4].position, 1)).filter((e) => set.has(e.stream));
        if (page.length > 0) expect(page[0].id).to.equal(appended[5]);
      });

      it('readAll honours its limit', async function () {
        const start = await store.headPosition();
        await store.appendToStream(streamName(), events(5), 'no_stream');
        expect(await store.readAll(start, 3)).to.have.length(3);
      });
    });

    describe('subscribeToAll', function () {
      it('delivers every event, in order and once, including events appended while running', async function () {
        const start = await store.headPosition();
        const streams = [streamName(), streamName()];
        const set = new Set(streams);
        const expected: string[] = [];
        for (let i = 0; i < 6; i++) {
          const batch = events(3);
          await store.appendToStream(streams[i % 2], batch, 'any');
          expected.push(...ids(batch));
        }
        const seen: RecordedEvent[] = [];
        let lastBatchPosition: string | null = null;
        let error: unknown;
        const sub = store.subscribeToAll(
          start,
          async (batch) => {
            expect(batch.length).to.be.greaterThan(0);
            expect(batch.length).to.be.at.most(4);
            expect(comparePositions(lastBatchPosition, batch[0].position)).to.equal(-1);
            lastBatchPosition = batch[batch.length - 1].position;
            seen.push(...batch.filter((e) => set.has(e.stream)));
          },
          { batchSize: 4, onError: (err) => (error = err) },
        );
        try {
          await waitFor(() => seen.length >= expected.length || error !== undefined, 'catch-up');
          for (let i = 0; i < 4; i++) {
            const batch = events(2);
            await store.appendToStream(streams[i % 2], batch, 'any');
            expected.push(...ids(batch));
          }
          await waitFor(() => seen.length >= expected.length || error !== undefined, 'live events');
          // A marker appended last: anything delivered twice or out of place comes before it.
          const [marker] = events(1);
          await store.appendToStream(streams[0], [marker], 'any');
          expected.push(marker.id);
          await waitFor(() => seen.some((e) => e.id === marker.id) || error !== undefined, 'the marker');
        } finally {
          await sub.stop();
        }
        expect(error).to.equal(undefined);
        expect(ids(seen)).to.deep.equal(expected);
        expectStrictlyIncreasing(seen);
      });

      it('resumes exactly after a checkpoint', async function () {
        const start = await store.headPosition();
        const s = streamName();
        const appended = events(10);
        await store.appendToStream(s, appended, 'no_stream');
        const all = await readAllOf(store, start, new Set([s]));
        const seen: RecordedEvent[] = [];
        const [marker] = events(1);
        const sub = store.subscribeToAll(all[3].position, async (batch) => {
          seen.push(...batch.filter((e) => e.stream === s));
        });
        try {
          await waitFor(() => seen.length >= 6, 'events after the checkpoint');
          // A marker appended last: an event before the checkpoint delivered late would come before it.
          await store.appendToStream(s, [marker], 'any');
          await waitFor(() => seen.some((e) => e.id === marker.id), 'the marker');
        } finally {
          await sub.stop();
        }
        expect(ids(seen)).to.deep.equal([...ids(appended.slice(4)), marker.id]);
      });

      it('stops after stop() and reports a failing handler through onError', async function () {
        const start = await store.headPosition();
        const s = streamName();
        await store.appendToStream(s, events(3), 'no_stream');
        const failure = new Error('handler failed');
        let reported: unknown;
        let calls = 0;
        const sub = store.subscribeToAll(
          start,
          async () => {
            calls++;
            throw failure;
          },
          { onError: (err) => (reported = err) },
        );
        await waitFor(() => reported !== undefined, 'onError');
        await sub.stop();
        expect(reported).to.equal(failure);
        const callsAtStop = calls;
        const [after] = events(1);
        await store.appendToStream(s, [after], 'any');
        // Another subscription receiving that event shows it was there to deliver.
        let delivered = false;
        const witness = store.subscribeToAll(start, async (batch) => {
          if (batch.some((e) => e.id === after.id)) delivered = true;
        });
        try {
          await waitFor(() => delivered, 'the event on another subscription');
        } finally {
          await witness.stop();
        }
        expect(calls).to.equal(callsAtStop);
        expect(calls).to.equal(1);
      });
    });

    describe('concurrency', function () {
      it('50 concurrent appenders at the same expected revision: exactly one wins each round', async function () {
        this.timeout(120_000);
        const s = streamName();
        const rounds = 5;
        let expected: ExpectedRevision = 'no_stream';
        const winners: string[] = [];
        for (let round = 0; round < rounds; round++) {
          const candidates = events(50, `Round${round}`);
          const results = await Promise.allSettled(candidates.map((e) => store.appendToStream(s, [e], expected)));
          const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
          expect(won, `round ${round} winners`).to.have.length(1);
          for (const r of results) {
            if (r.status === 'rejected') expect(r.reason).to.be.instanceOf(WrongExpectedVersionError);
          }
          const result = results[won[0]] as PromiseFulfilledResult<AppendResult>;
          expect(result.value.nextRevision).to.equal(round);
          winners.push(candidates[won[0]].id);
          expected = round;
        }
        expect(ids(await store.readStream(s))).to.deep.equal(winners);
      });
    });

    // Adapters with a transaction across streams (PostgreSQL); EventStoreDB has none and no appendToStreams.
    describe('appendToStreams (atomic across streams)', function () {
      beforeEach(function () {
        if (!store.appendToStreams) this.skip(); // the adapter has no transaction across streams
      });

      it('appends to each stream at its expected revision, chained as single appends are, one result per stream', async function () {
        const [a, b, c] = [streamName(), streamName(), streamName()];
        await store.appendToStream(a, events(2), 'no_stream');
        await store.appendToStream(b, events(1), 'no_stream');
        const start = await store.headPosition();
        const results = await store.appendToStreams!([
          { stream: a, events: events(2), expected: 1 },
          { stream: b, events: events(1), expected: 'stream_exists' },
          { stream: c, events: events(3), expected: 'no_stream' },
        ]);
        expect(results.map((r) => r.nextRevision)).to.deep.equal([3, 1, 2]);
        for (const [stream, result] of [[a, results[0]], [b, results[1]], [c, results[2]]] as const) {
          const read = await store.readStream(stream);
          expect(read.map((e) => e.revision)).to.deep.equal(read.map((_, i) => i));
          expect(read.map((e) => e.hash), `${stream}'s chain`).to.deep.equal(reference(read));
          expect(read.at(-1)!.position).to.equal(result.position);
        }
        const all = await readAllOf(store, start, new Set([a, b, c]));
        expect(all.map((e) => e.stream)).to.deep.equal([a, a, b, c, c, c]);
        expectStrictlyIncreasing(all);
      });

      it('one stream at the wrong revision: nothing stored in any, and the error names that stream', async function () {
        const [a, b] = [streamName(), streamName()];
        await store.appendToStream(b, events(3), 'no_stream');
        await expectWrongVersion(
          store.appendToStreams!([
            { stream: a, events: events(1), expected: 'no_stream' },
            { stream: b, events: events(1), expected: 1 },
          ]),
          b,
          1,
          2,
        );
        expect(await store.readStream(a)).to.deep.equal([]);
        expect(await store.readStream(b)).to.have.length(3);
        await expectWrongVersion(store.appendToStreams!([{ stream: a, events: events(1), expected: 0 }]), a, 0, 'no_stream');
      });

      it('an event id already stored fails as a conflict on its stream, storing nothing', async function () {
        const [a, b] = [streamName(), streamName()];
        const e = newEvent();
        await store.appendToStream(a, [e], 'no_stream');
        await expectWrongVersion(
          store.appendToStreams!([
            { stream: b, events: events(1), expected: 'no_stream' },
            { stream: a, events: [e], expected: 'any' },
          ]),
          a,
          'any',
          0,
        );
        expect(await store.readStream(b)).to.deep.equal([]);
      });

      it('writers crossing the same streams in opposite orders neither deadlock nor put a stream out of order in the log', async function () {
        this.timeout(120_000);
        const [a, b, c] = [streamName(), streamName(), streamName()];
        const start = await store.headPosition();
        const orders = [[a, b], [b, a], [c, a], [b, c, a]];
        await Promise.all(Array.from({ length: 40 }, (_, i) => store.appendToStreams!(orders[i % orders.length].map((stream) => ({ stream, events: events(1), expected: 'any' as const })))));
        const all = await readAllOf(store, start, new Set([a, b, c]));
        expect(all).to.have.length(2 * 10 + 2 * 10 + 2 * 10 + 3 * 10); // 40 writers, 10 per order
        for (const stream of [a, b, c]) {
          const inLog = all.filter((e) => e.stream === stream);
          expect(inLog.map((e) => e.revision), `${stream}: revisions in log order`).to.deep.equal(inLog.map((_, i) => i));
          expect(inLog.map((e) => e.hash)).to.deep.equal(reference(inLog));
        }
      });
    });

    describe('volume', function () {
      it('10,000 events appended in batches read back intact through readAll paging', async function () {
        this.timeout(300_000);
        const start = await store.headPosition();
        const streams = [streamName('volume'), streamName('volume'), streamName('volume'), streamName('volume')];
        const revisions = new Map<string, ExpectedRevision>(streams.map((s) => [s, 'no_stream']));
        const expected: { stream: string; revision: number; event: NewEvent }[] = [];
        const batchSize = 250;
        for (let b = 0; b < 10_000 / batchSize; b++) {
          const s = streams[b % streams.length];
          const prev = revisions.get(s)!;
          const base = prev === 'no_stream' ? 0 : (prev as number) + 1;
          const batch = Array.from({ length: batchSize }, (_, i) => {
            const n = b * batchSize + i;
            return newEvent(`Volume${n % 7}`, {
              n,
              amount: `${n}.${String(n % 100).padStart(2, '0')}`,
              text: `ligne ${n} — é ü 漢字 "quoted" \\ back`,
              nested: { list: [n, n + 1, { deep: n % 2 === 0 }], empty: {}, none: null },
            });
          });
          const r = await store.appendToStream(s, batch, prev);
          expect(r.nextRevision).to.equal(base + batchSize - 1);
          revisions.set(s, r.nextRevision);
          batch.forEach((event, i) => expected.push({ stream: s, revision: base + i, event }));
        }
        const all = await readAllOf(store, start, new Set(streams), 1000);
        expect(all).to.have.length(10_000);
        expectStrictlyIncreasing(all);
        all.forEach((e, i) => {
          const x = expected[i];
          if (
            e.id !== x.event.id ||
            e.stream !== x.stream ||
            e.revision !== x.revision ||
            e.type !== x.event.type
          ) {
            expect({ id: e.id, stream: e.stream, revision: e.revision, type: e.type }, `event ${i}`).to.deep.equal({
              id: x.event.id,
              stream: x.stream,
              revision: x.revision,
              type: x.event.type,
            });
          }
          expect(e.data, `data of event ${i}`).to.deep.equal(x.event.data);
          expect(e.metadata, `metadata of event ${i}`).to.deep.equal(x.event.metadata);
        });
      });
    });
  });
}
