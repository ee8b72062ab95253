/**
 * EventStoreDB adapter of the event store port (docs/architecture.md "Event store (PostgreSQL adapter)").
 *
 * Thin and mechanical: streams map one to one, revisions are numbers, event
 * ids are ours (so EventStoreDB's idempotent writes make retries safe), and a
 * checkpoint is the $all position `${commit}-${prepare}`, each zero-padded to
 * 20 digits so checkpoints sort as strings. System events (types starting with
 * '$') never leave this module.
 *
 * The hash chain (src/eventstore/chain.ts) is computed here, from the stream's
 * last event read just before the append, and the append is pinned to that
 * event's revision, so a concurrent writer makes it retry instead of forking
 * the chain. Each event's hash travels in its metadata under HASH_KEY, which
 * this module strips again on read (the hashed metadata never contains it).
 */
import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError as EsdbWrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AppendExpectedRevision,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type JSONType,
  type Position,
  type ReadPosition,
  type RecordedEvent as EsdbRecordedEvent,
  type StreamingRead,
} from '@eventstore/db-client';
import { bodyDigest, chainHashes, GENESIS_HASH } from './chain.ts';
import {
  WrongExpectedVersionError,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from './types.ts';

const RESUBSCRIBE_DELAY_MS = 1000;
const HASH_KEY = '$hash';
/** Appends with 'any' or 'stream_exists' retry this often when another writer moved the stream meanwhile. */
const CHAIN_ATTEMPTS = 20;
const HEAD_PAGE = 100;

export function encodePosition(p: Position): string {
  return `${p.commit.toString().padStart(20, '0')}-${p.prepare.toString().padStart(20, '0')}`;
}

export function decodePosition(checkpoint: string): Position {
  const m = /^(\d{1,20})-(\d{1,20})$/.exec(checkpoint);
  if (!m) throw new Error(`invalid EventStoreDB checkpoint: ${checkpoint}`);
  return { commit: BigInt(m[1]), prepare: BigInt(m[2]) };
}

function isSystem(ev: { type: string }): boolean {
  return ev.type.startsWith('$');
}

function toRecorded(ev: EsdbRecordedEvent, commitPosition?: bigint): RecordedEvent {
  const position = ev.position ?? (commitPosition !== undefined ? { commit: commitPosition, prepare: commitPosition } : undefined);
  if (!position) throw new Error(`EventStoreDB returned no position for event ${ev.id} (server older than 22.6?)`);
  const { [HASH_KEY]: hash, ...metadata } = (ev.metadata ?? {}) as Record<string, unknown>;
  return {
    id: ev.id,
    stream: ev.streamId,
    revision: Number(ev.revision),
    type: ev.type,
    data: ev.data,
    metadata: metadata as EventMetadata,
    position: encodePosition(position),
    hash: typeof hash === 'string' ? hash : '',
    created_at: ev.created,
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `target` is an esdb:// connection string or a client this store then owns. */
export async function createEventStoreDBEventStore(target: string | EventStoreDBClient): Promise<EventStore> {
  const client = typeof target === 'string' ? EventStoreDBClient.connectionString(target) : target;

  async function readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const direction = options.direction === 'backwards' ? BACKWARDS : FORWARDS;
    const fromRevision =
      options.fromRevision !== undefined ? BigInt(options.fromRevision) : direction === BACKWARDS ? END : START;
    const out: RecordedEvent[] = [];
    try {
      for await (const resolved of client.readStream(stream, { direction, fromRevision, maxCount: options.maxCount })) {
        if (resolved.event) out.push(toRecorded(resolved.event, resolved.commitPosition));
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError) return [];
      throw err;
    }
    return out;
  }

  /** Fails like EventStoreDB would when `expected` does not hold for the stream's current head. */
  function checkExpected(stream: string, expected: ExpectedRevision, head: RecordedEvent | undefined): void {
    const actual = head ? head.revision : 'no_stream';
    const holds =
      expected === 'any' ||
      (expected === 'no_stream' && head === undefined) ||
      (expected === 'stream_exists' && head !== undefined) ||
      (typeof expected === 'number' && actual === expected);
    if (!holds) throw new WrongExpectedVersionError(stream, expected, actual);
  }

  async function appendOnce(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult | 'moved'> {
    const [head] = await readStream(stream, { direction: 'backwards', maxCount: 1 });
    const ids = new Set(events.map((e) => e.id));
    if (head && ids.has(head.id)) {
      // A retried append that already succeeded (event ids are idempotent): answer as then.
      const stored = await readStream(stream, { fromRevision: Math.max(0, head.revision - events.length + 1) });
      const mine = stored.filter((e) => ids.has(e.id));
      if (mine.length === events.length) return { nextRevision: head.revision, position: head.position };
    }
    checkExpected(stream, expected, head);
    const first = head ? head.revision + 1 : 0;
    const hashes = chainHashes(head?.hash ?? GENESIS_HASH, stream, first, events.map(bodyDigest));
    const data = events.map((e, i) =>
      jsonEvent({
        id: e.id,
        type: e.type,
        data: e.data as JSONType,
        metadata: { ...(e.metadata as unknown as Record<string, JSONType>), [HASH_KEY]: hashes[i] },
      }),
    );
    const pinned: AppendExpectedRevision = head ? BigInt(head.revision) : 'no_stream';
    try {
      const result = await client.appendToStream(stream, data, { expectedRevision: pinned });
      if (!result.success) return 'moved'; // only with throwOnAppendFailure=false in the connection string
      const nextRevision = Number(result.nextExpectedRevision);
      if (result.position) return { nextRevision, position: encodePosition(result.position) };
      const [last] = await readStream(stream, { fromRevision: nextRevision, maxCount: 1 });
      return { nextRevision, position: last?.position ?? '' };
    } catch (err) {
      if (err instanceof EsdbWrongExpectedVersionError) return 'moved';
      throw err;
    }
  }

  async function appendToStream(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new TypeError('appendToStream needs at least one event');
    if (stream.includes('\n')) throw new TypeError('a stream name cannot contain a line break (it separates the hashed fields)');
    for (let attempt = 1; ; attempt++) {
      const result = await appendOnce(stream, events, expected);
      if (result !== 'moved') return result;
      // Another writer appended between our read and our append: an exact expectation fails now
      // (checkExpected on the fresh head), 'any' and 'stream_exists' chain onto the new head.
      if (attempt >= CHAIN_ATTEMPTS) {
        const [current] = await readStream(stream, { direction: 'backwards', maxCount: 1 });
        throw new WrongExpectedVersionError(stream, expected, current ? current.revision : 'no_stream');
      }
    }
  }

  async function readAll(after: string | null, limit: number): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    let seen = after; // $all reads start at their position inclusively: skip up to here
    let from: ReadPosition = after ? decodePosition(after) : START;
    while (out.length < limit) {
      const maxCount = Math.max(limit - out.length + 1, 64);
      let count = 0;
      const page: StreamingRead<AllStreamResolvedEvent> = client.readAll({ fromPosition: from, maxCount, direction: FORWARDS });
      for await (const resolved of page) {
        count++;
        const ev = resolved.event;
        if (!ev) continue;
        const pos = encodePosition(ev.position);
        if (seen !== null && pos <= seen) continue;
        seen = pos;
        from = ev.position;
        if (!isSystem(ev) && out.length < limit) out.push(toRecorded(ev));
      }
      if (count < maxCount) break;
    }
    return out;
  }

  function subscribeToAll(
    after: string | null,
    handler: (events: RecordedEvent[]) => Promise<void>,
    options: SubscribeOptions = {},
  ): Subscription {
    const batchSize = options.batchSize ?? 100;
    let last = after; // last handled checkpoint: where a dropped subscription resumes
    let stopped = false;
    let current: AllStreamSubscription | undefined;

    const run = async () => {
      while (!stopped) {
        const sub = client.subscribeToAll({
          fromPosition: last ? decodePosition(last) : START,
          filter: excludeSystemEvents(),
        });
        current = sub;
        try {
          let batch: RecordedEvent[] = [];
          for await (const resolved of sub) {
            if (stopped) break;
            const ev = resolved.event;
            if (ev && !isSystem(ev)) {
              const rec = toRecorded(ev);
              if (last === null || rec.position > last) batch.push(rec);
            }
            if (batch.length > 0 && (batch.length >= batchSize || sub.readableLength === 0)) {
              try {
                await handler(batch);
              } catch (err) {
                stopped = true;
                options.onError?.(err);
                break;
              }
              last = batch[batch.length - 1].position;
              batch = [];
            }
          }
        } catch {
          // dropped: resubscribe from the last handled position below
        } finally {
          await sub.unsubscribe().catch(() => undefined);
        }
        if (!stopped) await sleep(RESUBSCRIBE_DELAY_MS);
      }
    };
    const done = run();

    return {
      async stop() {
        stopped = true;
        await current?.unsubscribe().catch(() => undefined);
        await done;
      },
    };
  }

  async function headPosition(): Promise<string | null> {
    let from: ReadPosition = END;
    let seen: string | null = null;
    for (;;) {
      let count = 0;
      const page: StreamingRead<AllStreamResolvedEvent> = client.readAll({ fromPosition: from, maxCount: HEAD_PAGE, direction: BACKWARDS });
      for await (const resolved of page) {
        count++;
        const ev = resolved.event;
        if (!ev) continue;
        const pos = encodePosition(ev.position);
        if (seen !== null && pos >= seen) continue;
        if (!isSystem(ev)) return pos;
        seen = pos;
        from = ev.position;
      }
      if (count < HEAD_PAGE) return null;
    }
  }

  return {
    kind: 'eventstoredb',
    appendToStream,
    readStream,
    readAll,
    subscribeToAll,
    headPosition,
    close: () => client.dispose(),
  };
}
