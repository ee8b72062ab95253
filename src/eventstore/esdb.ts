/**
 * EventStoreDB adapter of the event store port (docs/architecture.md "Event store (PostgreSQL adapter)").
 *
 * Thin and mechanical: streams map one to one, revisions are numbers, event
 * ids are ours (so EventStoreDB's idempotent writes make retries safe), and a
 * checkpoint is the $all position `${commit}-${prepare}`, each zero-padded to
 * 20 digits so checkpoints sort as strings. System events (types starting with
 * '$') never leave this module.
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
const HEAD_PAGE = 100;

export function encodePosition(p: Position): string {
  return `${p.commit.toString().padStart(20, '0')}-${p.prepare.toString().padStart(20, '0')}`;
}

export function decodePosition(checkpoint: string): Position {
  const m = /^(\d{1,20})-(\d{1,20})$/.exec(checkpoint);
  if (!m) throw new Error(`invalid EventStoreDB checkpoint: ${checkpoint}`);
  return { commit: BigInt(m[1]), prepare: BigInt(m[2]) };
}

function toExpected(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === 'no_stream' || expected === 'stream_exists' || expected === 'any') return expected;
  return BigInt(expected);
}

function isSystem(ev: { type: string }): boolean {
  return ev.type.startsWith('$');
}

function toRecorded(ev: EsdbRecordedEvent, commitPosition?: bigint): RecordedEvent {
  const position = ev.position ?? (commitPosition !== undefined ? { commit: commitPosition, prepare: commitPosition } : undefined);
  if (!position) throw new Error(`EventStoreDB returned no position for event ${ev.id} (server older than 22.6?)`);
  return {
    id: ev.id,
    stream: ev.streamId,
    revision: Number(ev.revision),
    type: ev.type,
    data: ev.data,
    metadata: ev.metadata as EventMetadata,
    position: encodePosition(position),
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

  async function appendToStream(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new TypeError('appendToStream needs at least one event');
    const data = events.map((e) =>
      jsonEvent({ id: e.id, type: e.type, data: e.data as JSONType, metadata: e.metadata as unknown as JSONType }),
    );
    try {
      const result = await client.appendToStream(stream, data, { expectedRevision: toExpected(expected) });
      if (!result.success) {
        // Only with throwOnAppendFailure=false in the connection string: ask the stream itself.
        const [current] = await readStream(stream, { direction: 'backwards', maxCount: 1 });
        throw new WrongExpectedVersionError(stream, expected, current ? current.revision : 'no_stream');
      }
      const nextRevision = Number(result.nextExpectedRevision);
      if (result.position) return { nextRevision, position: encodePosition(result.position) };
      const [last] = await readStream(stream, { fromRevision: nextRevision, maxCount: 1 });
      return { nextRevision, position: last?.position ?? '' };
    } catch (err) {
      if (err instanceof EsdbWrongExpectedVersionError) {
        const actual = err.actualVersion === 'no_stream' ? 'no_stream' : Number(err.actualVersion);
        throw new WrongExpectedVersionError(stream, expected, actual);
      }
      throw err;
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
