/**
 * The event store port. Two adapters implement it (PostgreSQL in ./postgres,
 * EventStoreDB in ./esdb) and one contract suite (test/eventstore) proves both.
 *
 * Revisions start at 0 for a stream's first event (EventStoreDB's convention).
 * Checkpoints are opaque strings that sort lexicographically in log order, so
 * consumers can compare them with `<` without knowing the adapter.
 */

export type ExpectedRevision = 'no_stream' | 'stream_exists' | 'any' | number;

/** Carried by every event (docs/architecture.md "Event store (PostgreSQL adapter)"). */
export interface EventMetadata {
  organization_id: string | null;
  actor: string; // API key id, or 'system'
  request_id: string | null;
  correlation_id: string | null;
  causation_id: string | null;
  occurred_at: string; // ISO 8601 UTC with milliseconds
  [extra: string]: unknown;
}

export interface NewEvent<T = unknown> {
  id: string; // UUID; appending the same id again is a no-op
  type: string;
  data: T;
  metadata: EventMetadata;
}

export interface RecordedEvent<T = unknown> {
  id: string;
  stream: string;
  revision: number;
  type: string;
  data: T;
  metadata: EventMetadata;
  /** Opaque, sortable position in the global log. */
  position: string;
  /** Link of the stream's hash chain (src/eventstore/chain.ts, docs/audit.md). */
  hash: string;
  created_at: Date;
  /**
   * PostgreSQL store: the projectors that wrote the event's read-model rows in its append's own
   * transaction, one bit each (INLINE_BITS in src/projections/inline.ts); their runners skip it.
   * 0 or absent: none (EventStoreDB has no such transaction).
   */
  inlineProjectors?: number;
}

/** An entry of readAllText: `event` is null for another organization's event. */
export interface TextLogEntry {
  position: string;
  event: {
    id: string;
    stream: string;
    revision: number;
    type: string;
    hash: string;
    /** metadata.organization_id when it is a string (null otherwise). */
    organization_id: string | null;
    /** metadata.occurred_at and metadata.actor as JSON values (undefined when the key is absent). */
    occurred_at: unknown;
    actor: unknown;
    /** JSON text as stored: on PostgreSQL the event's RFC 8785 text (migration 0103), unless written by hand. */
    data: string;
    metadata: string;
  } | null;
}

export interface AppendResult {
  /** Revision of the last event now in the stream. */
  nextRevision: number;
  /** Global position of the last appended event (the one to wait for). */
  position: string;
  /**
   * The events were stored already, by an earlier call with the same event ids (an idempotent retry): this
   * call stored nothing, and the stream holds those earlier events, whose data may differ from the ones
   * given (a timestamp decided again). Set by the PostgreSQL adapter; EventStoreDB does not tell.
   */
  replayed?: true;
}

/** One stream's part of an atomic append to several streams (EventStore.appendToStreams). */
export interface StreamAppend {
  stream: string;
  events: NewEvent[];
  expected: ExpectedRevision;
  /** The condition the append commits under (EventStore.withCondition), if any. */
  condition?: AppendCondition;
}

/**
 * A condition an append commits under (EventStore.withCondition, PostgreSQL
 * only): a statement run in the append's own transaction, after its events
 * and their inline rows, that refuses the whole append, by raising SQLSTATE
 * ES010 (es_require, migration 0109), unless what it checks still holds.
 * The store records the outcome on the object, so that the caller knows
 * whether anything may have been written.
 */
export interface AppendCondition {
  /** The statement: prepared once per connection, its parameters $1..$n typed by casts or context in the text. */
  sql: string;
  /** Its arguments, each an SQL literal. */
  args: string[];
  /** The order in which one message runs its conditions (they may lock rows: one order, no deadlock). */
  order: string;
  /**
   * - `unsent`: no append with it was sent: nothing was written under it.
   * - `sent`: sent, outcome unknown (the connection was lost). A later attempt's refusal leaves it so (the first may
   *   have committed), but for the condition's own: it runs after es_append, which refuses events or a stream an
   *   earlier attempt stored, so it proves no attempt stored them (`refused`).
   * - `refused`: the append was refused (the condition, a conflict...): nothing was written.
   * - `committed`: the append committed with it (or had been stored by an earlier attempt of this very append).
   */
  state: 'unsent' | 'sent' | 'refused' | 'committed';
  /** The statement's row, once committed in this attempt (null for an append an earlier attempt stored). */
  seen: Record<string, unknown> | null;
}

/** An append refused by its condition (AppendCondition): nothing was written. */
export class ConditionFailedError extends Error {
  constructor(readonly stream: string, readonly cause: unknown) {
    super(`the condition of the append to ${stream} no longer holds: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'ConditionFailedError';
  }
}

/** A new condition: `sql` and `args` as AppendCondition's, nothing sent yet. */
export function appendCondition(sql: string, args: string[], order: string): AppendCondition {
  return { sql, args, order, state: 'unsent', seen: null };
}

export interface ReadStreamOptions {
  fromRevision?: number;
  direction?: 'forwards' | 'backwards';
  maxCount?: number;
}

export interface Subscription {
  /** Resolves once the subscription has stopped (after the current handler call). */
  stop(): Promise<void>;
}

export interface SubscribeOptions {
  batchSize?: number;
  /**
   * The event types the handler reads. When the subscription reads the store
   * itself (catching up, behind the process's shared tail) an adapter may
   * return only these, plus, at the end of a short page, a `$checkpoint`
   * event (no data) carrying the position the read covered, so the consumer
   * moves past what it skips. Consumers must ignore types they do not handle.
   */
  types?: readonly string[];
  /** Called when the handler throws; the subscription stops after it. */
  onError?: (err: unknown) => void;
}

export interface EventStore {
  readonly kind: 'postgres' | 'eventstoredb';
  appendToStream(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  /**
   * Optional: appends to several streams in one transaction, all or nothing
   * (one result per append, in order). A stream not at its expected revision,
   * or an event id already stored, fails the whole call with
   * WrongExpectedVersionError naming that stream. The PostgreSQL adapter has
   * it; EventStoreDB has no transaction across streams, so callers keep a
   * protocol of single-stream appends for it (finalize: docs/architecture.md
   * "Invariants across streams").
   */
  appendToStreams?(appends: StreamAppend[]): Promise<AppendResult[]>;
  /** Events of one stream; [] when the stream does not exist. */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** Events of every stream after `after` (null: from the start), in global order. */
  readAll(after: string | null, limit: number): Promise<RecordedEvent[]>;
  /**
   * Optional, for the auditor's tools, which copy or hash events without
   * parsing them: readAll's page with data and metadata as their stored JSON
   * text, every event's (organizationId null) or one organization's, every
   * other event then reduced to its position. An adapter without it is read
   * with readAll (src/audit/export.ts, src/audit/verify.ts).
   */
  readAllText?(after: string | null, limit: number, organizationId: string | null): Promise<TextLogEntry[]>;
  /** Handler gets ordered batches; it resumes exactly after the last handled event. */
  subscribeToAll(
    after: string | null,
    handler: (events: RecordedEvent[]) => Promise<void>,
    options?: SubscribeOptions,
  ): Subscription;
  /** Checkpoint of the newest event visible to readers (null when the log is empty). */
  headPosition(): Promise<string | null>;
  /**
   * Optional, on a store with inline projections (the PostgreSQL adapter's,
   * src/projections/inline.ts): the same store for writers no client waits
   * on (the scheduler), whose appends write no read-model row in their
   * transaction. The runners write those rows, many events per transaction
   * (docs/architecture.md "Inline projections"). It shares this store's
   * connections and subscriptions; closing this store closes it.
   */
  withoutInlineProjections?(): EventStore;
  /**
   * PostgreSQL only: the same store, whose appends all commit under
   * `condition` (AppendCondition), which runs in each append's transaction
   * (a group of creations' too); a refusal by it is ConditionFailedError.
   * EventStoreDB has no transaction to run it in.
   */
  withCondition?(condition: AppendCondition): EventStore;
  /**
   * A view made for one request (stream-rider.ts) names the store it reads and appends through: what
   * per-store state (the invoice numbering's cache and its shared transactions) belongs to.
   */
  readonly origin?: EventStore;
  close(): Promise<void>;
}

/** Raised when the expected revision does not match the stream. */
export class WrongExpectedVersionError extends Error {
  readonly code = 'WRONG_EXPECTED_VERSION';
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    /** Current revision, or 'no_stream' when the stream does not exist. */
    readonly actual: number | 'no_stream',
  ) {
    super(`wrong expected version on ${stream}: expected ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedVersionError';
  }
}

/** An inline projection threw (PostgreSQL adapter): the append was rolled back, nothing of it is stored (no event without its rows). */
export class InlineProjectionError extends Error {
  constructor(readonly stream: string, readonly cause: unknown) {
    super(`inline projection failed on ${stream}, append rolled back: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'InlineProjectionError';
  }
}

/** Compare two checkpoints; null sorts before everything. */
export function comparePositions(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}
