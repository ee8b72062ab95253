/**
 * A stream read that rides with another statement (PostgreSQL): the stream's
 * events come back as extra columns of that statement's rows, one row per
 * event, so a request reads its key and the stream it writes to in one round
 * trip (src/api/pipeline/prefetch.ts, docs/performance.md "The invoice's
 * stream with the key's statement"). The rows are decoded as the store's own
 * readStream decodes them (the same columns, the same types), and the store
 * view answers the command's first read of that stream with them.
 */
import { EVENT_COLUMNS, toRecorded } from './postgres.ts';
import type { EventStore, ReadStreamOptions, RecordedEvent } from './types.ts';

const PREFIX = 'e_';
const COLUMNS = EVENT_COLUMNS.split(', ');

/**
 * The join that adds the events of the stream named by `streamSql` (a parameter, `$3`) to a statement's
 * rows, oldest first, columns prefixed `e_` (a row with nulls when the stream has none).
 */
export function streamRiderJoin(streamSql: string): string {
  return `left join lateral (
      select ${COLUMNS.map((c) => `${c} as ${PREFIX}${c}`).join(', ')}
        from es_events where stream_id = ${streamSql} order by revision
    ) ${PREFIX}events on true`;
}

/** The events a statement with streamRiderJoin returned, oldest first. */
export function streamRiderEvents(rows: readonly Record<string, any>[]): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  for (const row of rows) {
    if (row.e_event_id === null || row.e_event_id === undefined) continue;
    const event: Record<string, unknown> = {};
    for (const c of COLUMNS) event[c] = row[PREFIX + c];
    events.push(toRecorded(event));
  }
  // The join's rows come in the subquery's order; sorted all the same, since only an ORDER BY promises an order.
  return events.sort((a, b) => a.revision - b.revision);
}

/**
 * `store`, whose first read of the whole `stream` (forwards, from its start, every event) answers `events`,
 * read by the request's own earlier statement; every other read, and every read after that one (a retry after
 * a conflict reads what is stored now), goes to the store. Appends go to the store unchanged.
 */
export function withStreamRead(store: EventStore, stream: string, events: RecordedEvent[]): EventStore {
  let unused = true;
  return {
    ...store,
    origin: store.origin ?? store,
    async readStream(name: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
      const whole = !options || ((options.direction ?? 'forwards') === 'forwards' && !options.fromRevision && options.maxCount === undefined);
      if (unused && name === stream && whole) {
        unused = false;
        return events;
      }
      return store.readStream(name, options);
    },
    // The store it came from owns the connections and subscriptions (and closes them).
    async close() {},
  };
}
