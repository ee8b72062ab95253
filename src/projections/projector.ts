import type { Kysely, Transaction } from 'kysely';
import type { InlineStatement } from '../eventstore/postgres.ts';
import type { RecordedEvent } from '../eventstore/types.ts';
import type { Database } from '../db/schema.ts';

export interface ApplyOptions {
  /** The projector's opening() statement already ran in this transaction. */
  opened?: boolean;
}

/**
 * A projector turns events into rows of its read-model tables.
 * apply() runs inside the transaction that also moves its checkpoint, so a
 * batch is applied exactly once. Table names must stay unqualified: a rebuild
 * runs the same code with search_path pointing at a shadow schema.
 */
export interface Projector {
  name: string;
  /** Event types it reads; others only move its checkpoint. */
  handles: readonly string[];
  /** Its tables, all in the public schema (rebuild copies and swaps them). */
  tables: readonly string[];
  apply(events: RecordedEvent[], trx: Transaction<Database>, options?: ApplyOptions): Promise<void>;
  /**
   * The statement a batch's transaction must run first, as SQL text with the
   * values as literals (`literal` escapes one), or null: the runner sends it
   * with its BEGIN, and an inline append in the message of its es_append, one
   * round trip fewer each; both tell apply() (`opened`), which otherwise runs
   * it itself (rebuild, verify). It reads only the events' types and data, so
   * it can be written before the events are appended.
   */
  opening?(events: readonly Pick<RecordedEvent, 'type' | 'data'>[], literal: (value: string) => string): string | null;
  /**
   * The events of a batch that need a write, read outside any transaction
   * (the runner asks before it opens one): a batch left with none moves the
   * checkpoint lazily, like a batch of events the projector does not handle.
   * For a consumer that most events concern in type but not in fact (the
   * webhook subscriber, for organizations with no endpoint). Absent: all.
   */
  relevant?(events: RecordedEvent[], db: Kysely<Database>): Promise<RecordedEvent[]>;
  /**
   * All that apply() would write for these events, opening() included, as
   * statements the inline append sends in its own message, after es_append
   * (one implicit transaction): the write is then one round trip. Only for a batch
   * the projector can write without reading anything first (the invoices
   * projector: every batch but an edit's); null otherwise, and opening() and
   * apply() run as usual. Reads only the
   * events' ids, streams, types, data and metadata (they are not appended yet).
   */
  statements?(events: readonly Pick<RecordedEvent, 'id' | 'stream' | 'type' | 'data' | 'metadata'>[], literal: (value: string) => string): InlineStatement[] | null;
  /**
   * Inline: on the PostgreSQL event store, also applied inside the append's
   * transaction (inline.ts), so writes answer from its rows without waiting.
   * Set in src/read-models.ts for the read models writes answer from.
   */
  inline?: boolean;
}
