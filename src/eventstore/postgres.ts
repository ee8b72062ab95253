/**
 * PostgreSQL adapter of the event store port (docs/architecture.md "Event store (PostgreSQL adapter)").
 * Appends go through the es_append function (one round trip); reads follow
 * (transaction_id, global_position) and never pass pg_snapshot_xmin.
 * Consumers are woken by a NOTIFY sent once the append has committed
 * (CoalescedNotify), not from inside the append transaction, and share one
 * reader of the log's tail per process (LogTail).
 */
import pg from 'pg';
import { canonicalBodyFromText, sha256Hex } from './chain.ts';
import { canonicalJson } from './jcs.ts';
import { LogTail } from './log-tail.ts';
import { sqlLiteral } from './sql-literal.ts';
import { AppendGroups } from './append-groups.ts';
import { listenerCensus } from './listener-census.ts';
import { CoalescedNotify, Notifier } from './notifier.ts';
import { decodePosition, encodePosition } from './position.ts';
import { subscribeByPolling } from './polling-subscription.ts';
import {
  ConditionFailedError,
  InlineProjectionError,
  WrongExpectedVersionError,
  comparePositions,
  type AppendCondition,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamAppend,
  type TextLogEntry,
} from './types.ts';

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export const EVENT_COLUMNS = 'global_position, transaction_id, stream_id, revision, event_id, type, data, metadata, hash, created_at, inline_projectors';

function expectedCode(expected: ExpectedRevision): number {
  if (expected === 'any') return -1;
  if (expected === 'no_stream') return -2;
  if (expected === 'stream_exists') return -3;
  if (!Number.isInteger(expected) || expected < 0) throw new TypeError(`invalid expected revision ${expected}`);
  return expected;
}

export function toRecorded(row: any): RecordedEvent {
  return {
    id: row.event_id,
    stream: row.stream_id,
    revision: row.revision === null ? -1 : Number(row.revision),
    type: row.type,
    data: row.data,
    metadata: row.metadata,
    position: encodePosition(row.transaction_id, row.global_position),
    hash: row.hash,
    created_at: row.created_at,
    inlineProjectors: row.inline_projectors ?? 0,
  };
}

/** es_append's arguments after the stream and the expected revision: one array per field, one element per event. */
export interface AppendArguments {
  ids: string[];
  types: string[];
  /** Each event's data and metadata as RFC 8785 text: es_append stores them as they are, so the stored text is the hashed text (migration 0103). */
  data: string[];
  metadata: string[];
  /** hex(SHA-256) of each event's RFC 8785 body (src/eventstore/chain.ts), from which es_append chains the stream's hashes. */
  bodies: string[];
}

/**
 * es_append's arguments (migration 0104): each event's data and metadata
 * serialized once, as RFC 8785 text, which is both what is sent and stored
 * and what its digest covers (docs/audit.md "What the log stores").
 */
export function appendArguments(stream: string, events: NewEvent[]): AppendArguments {
  if (stream.includes('\n')) throw new TypeError('a stream name cannot contain a line break (it separates the hashed fields)');
  const args: AppendArguments = { ids: [], types: [], data: [], metadata: [], bodies: [] };
  for (const e of events) {
    const data = canonicalJson(e.data);
    const metadata = canonicalJson(e.metadata);
    if (data === undefined || metadata === undefined) throw new TypeError(`event ${e.id} cannot be encoded as JSON`);
    args.ids.push(e.id);
    args.types.push(e.type);
    args.data.push(data);
    args.metadata.push(metadata);
    args.bodies.push(sha256Hex(canonicalBodyFromText(e.id, e.type, data, metadata)));
  }
  return args;
}

/** The same arguments as SQL text, values as escaped literals (for a message of several statements, which takes no parameters). */
function argumentsAsSql(args: AppendArguments, literal: (value: string) => string): string {
  const array = (values: string[], type: string) => `array[${values.map(literal).join(',')}]::${type}[]`;
  return [array(args.ids, 'uuid'), array(args.types, 'text'), array(args.data, 'json'), array(args.metadata, 'json'), array(args.bodies, 'text')].join(', ');
}

/**
 * Inline projections (docs/architecture.md "Inline projections"): read models
 * whose rows are written in the append's own transaction, so an answered
 * write is readable at once. The store knows them only through this port
 * (src/projections/inline.ts implements it), so the event store depends on
 * no read model. `grouped` (opening, apply, statements): the events are a
 * group of creations (append-groups.ts), each retried alone should the group
 * fail, so a projector's failure there is not yet an event's (a warning, not
 * the alert).
 */
export interface InlineProjections {
  /** Whether an inline projection reads this event type (an append with none stays one autocommit statement). */
  handles(type: string): boolean;
  /** The projectors that write inline, one bit each: the mark es_append stores on the events they write (es_events.inline_projectors). */
  readonly mark: number;
  /**
   * What the projections must run first in the append's transaction (their locks), as SQL text with
   * literals, or null: sent in the append's own message, one round trip fewer.
   */
  opening(events: readonly (NewEvent & { stream: string })[], literal: (value: string) => string, grouped?: boolean): string | null;
  /** Writes the rows of these just-appended events on `client`, inside its open transaction; throws to refuse the append. `opened`: opening() ran. */
  apply(events: RecordedEvent[], client: pg.PoolClient, opened: boolean, grouped?: boolean): Promise<void>;
  /**
   * All the projections write for these events, their openings included, as statements sent in the append's
   * own message, after its es_append (the write is one round trip, one implicit transaction), when every
   * projection they concern can say them without reading first; else null, and opening() and apply() run.
   */
  statements(events: readonly (NewEvent & { stream: string })[], literal: (value: string) => string, grouped?: boolean): InlineMessage | null;
}

/**
 * A statement of an inline write sent in the append's own message
 * (InlineProjections.statements): SQL text with its values as literals, or a
 * statement the store prepares once per connection (`sql` with $1...$n,
 * their types fixed by casts in the text) and runs with `args`, each an SQL
 * literal or NULL, so it is planned once per connection, not at every write.
 */
export type InlineStatement = { text: string } | { sql: string; args: string[] };

/** The whole of the inline projections' writes for one append, sent in its message (InlineProjections.statements). */
export interface InlineMessage {
  statements: InlineStatement[];
  /** The message committed, with these events: their rows are written. */
  committed(events: RecordedEvent[]): void;
  /** The append was refused or its outcome is unknown (nothing to skip); `inProjection`: one of the statements failed (a projector bug: the alert). */
  refused(err: unknown, inProjection: boolean): void;
}

/** A retried append whose events are all stored already succeeded before: answer as then. */
async function previousAppend(db: Queryable, stream: string, events: NewEvent[]): Promise<AppendResult | null> {
  const { rows } = await db.query(
    `select stream_id, revision, transaction_id, global_position from es_events where event_id = any($1::uuid[])
     order by transaction_id, global_position`,
    [events.map((e) => e.id)],
  );
  if (rows.length !== events.length || rows.some((r) => r.stream_id !== stream)) return null;
  const last = rows[rows.length - 1];
  return { nextRevision: Number(last.revision), position: encodePosition(last.transaction_id, last.global_position), replayed: true };
}

/**
 * Append inside a transaction the caller owns (BEGIN/COMMIT); the store's own
 * appendToStream is this in autocommit. Exported for tests that must hold a
 * transaction open. Sends no notification: consumers find such events by
 * polling, or at the next append's notification.
 */
export async function appendInTransaction(
  db: Queryable,
  stream: string,
  events: NewEvent[],
  expected: ExpectedRevision,
  /** The error an inline append's es_append raised (its transaction is rolled back): classify it only. */
  failed?: unknown,
): Promise<AppendResult> {
  if (events.length === 0) throw new TypeError('appendToStream needs at least one event');
  const args = appendArguments(stream, events);
  try {
    if (failed) throw failed;
    // Named statements: parsed and planned once per connection (docs/performance.md, "Event store"). One array per
    // field (migration 0104); data and metadata as `json`, stored as the text sent (0103). A lone event (nearly
    // every append) goes as plain values in one-element arrays built by the server: its JSON is not escaped into
    // an array literal here nor unescaped from one there (docs/performance.md "Writes: group commit, fewer statements, less Node per write").
    const { rows } = await db.query(
      events.length === 1
        ? {
            name: 'es_append_one',
            text: 'select last_revision, last_transaction, last_position from es_append($1, $2, array[$3::uuid], array[$4::text], array[$5::json], array[$6::json], array[$7::text])',
            values: [stream, expectedCode(expected), args.ids[0], args.types[0], args.data[0], args.metadata[0], args.bodies[0]],
          }
        : {
            name: 'es_append',
            text: 'select last_revision, last_transaction, last_position from es_append($1, $2, $3::uuid[], $4::text[], $5::json[], $6::json[], $7::text[])',
            values: [stream, expectedCode(expected), args.ids, args.types, args.data, args.metadata, args.bodies],
          },
    );
    const r = rows[0];
    return { nextRevision: Number(r.last_revision), position: encodePosition(r.last_transaction, r.last_position) };
  } catch (err: any) {
    const isConflict = err.code === 'ES001';
    const isDuplicateId = err.code === '23505' && err.constraint === 'es_events_event_id_key';
    if (!isConflict && !isDuplicateId) throw err;
    // Inside a caller's transaction the failed statement aborted it: nothing more can be read.
    const previous = 'release' in db ? null : await previousAppend(db, stream, events);
    if (previous) return previous;
    if (isConflict) {
      const actual = err.detail === 'no_stream' ? 'no_stream' : Number(err.detail);
      throw new WrongExpectedVersionError(stream, expected, actual);
    }
    throw new WrongExpectedVersionError(stream, expected, 'no_stream');
  }
}

/**
 * The events as stored, for inline projections: revisions from the append's
 * result, `created_at` the transaction's now() (es_events' default, so the
 * same value a reader gets), data and metadata as given (JSON values: what a
 * reader parses back). Only the last event's position is known exactly; the
 * others get positions just before it (projectors order by stream revision,
 * never by position).
 */
function asRecorded(stream: string, events: NewEvent[], lastRevision: number, tx: string, lastPosition: string, at: Date): RecordedEvent[] {
  const n = events.length;
  return events.map((e, i) => ({
    id: e.id,
    stream,
    revision: lastRevision - (n - 1 - i),
    type: e.type,
    data: e.data,
    metadata: e.metadata,
    position: encodePosition(tx, String(BigInt(lastPosition) - BigInt(n - 1 - i))),
    hash: '',
    created_at: at,
  }));
}

/** The append statements of an atomic append were refused (conflict, duplicate id, lost connection): rolled back, `cause` says why. */
class AppendRefused {
  constructor(readonly cause: unknown) {}
}

/**
 * One or more streams' appends in one transaction, on one pooled
 * connection, as one message: the streams' locks (several streams only),
 * one es_append per stream, and, when inline projections read these events
 * and can say all they write in advance (InlineProjections.statements),
 * their statements: the write is one round trip. Such a message has no
 * BEGIN and no COMMIT: PostgreSQL runs the statements of one simple-protocol
 * message as one implicit transaction, committed after the last and rolled
 * back whole when one fails (two statements fewer at every write,
 * docs/performance.md "Writes: group commit, fewer statements, less Node per write"). When the projections must
 * read first, the message begins with BEGIN and ends with their opening
 * statements (their locks), and their other statements and COMMIT follow.
 * The events (and their rows) commit together or not at all.
 * Values go as escaped literals (simple protocol: several statements in one
 * message; a projector's prepared statement runs with EXECUTE). now() is
 * the transaction's timestamp, which es_events.created_at defaults to; events
 * whose rows are written here are marked applied_inline (migration 0100), and
 * with the projectors that wrote them (inline_projectors, migration 0106): their
 * runners, in every process, skip them, and `projections verify` knows those
 * rows are in the live tables even past the runner's checkpoint.
 *
 * Several streams' advisory locks are all taken first, in the order of their
 * keys: es_append's rule (migration 0100) that a stream's lock comes before
 * the transaction's first write (the log's order is the xid's, taken at that
 * write) must hold for every stream of the transaction, and one order for
 * everyone makes two multi-stream appends unable to deadlock.
 *
 * Conditions (AppendCondition: a request's key and facts, checked at the
 * write) come last, in their `order`, after the events and their rows: at
 * the end of a message that is the whole write, and with the COMMIT of one
 * followed by apply(). So every lock they take is taken after every other
 * lock of any append, and two writes never wait on each other through them.
 * Each condition's state says what became of the append; once an attempt's
 * outcome is unknown (the connection lost with it), a later attempt's
 * refusal leaves it `sent`: the first may have committed.
 *
 * A refused append throws AppendRefused once its connection is back in the
 * pool (the caller classifies the cause, reading if it must, without holding
 * a second connection); a failing projection InlineProjectionError (a 500
 * for the client, nothing half-written).
 */
async function appendAtomically(pool: pg.Pool, appends: StreamAppend[], inline: InlineProjections | undefined, grouped = false): Promise<AppendResult[]> {
  if (appends.length === 0 || appends.some((a) => a.events.length === 0)) throw new TypeError('an append needs at least one event per stream');
  const streams = appends.map((a) => a.stream);
  if (new Set(streams).size !== streams.length) throw new TypeError('appendToStreams takes each stream once');
  const inlined = appends.map((a) => inline !== undefined && a.events.some((e) => inline.handles(e.type)));
  const withInline = inlined.includes(true);
  // Everything that may throw in Node comes before a connection is taken: the arguments (an event JSON cannot
  // encode) and the inline projections' opening statements (their locks, which ride in the same message, after
  // the appends, as they would come in their own statement; a projector bug there refuses the append like one in apply).
  const args = appends.map((a) => appendArguments(a.stream, a.events));
  const literal = sqlLiteral;
  // The projections' whole writes when they can say them in advance (`whole`: the message is the whole write),
  // else their openings (the rest, apply(), follows the message, then COMMIT).
  let whole: InlineMessage | null = null;
  let opening: string | null = null;
  try {
    if (withInline) {
      const events = appends.flatMap((a, i) => (inlined[i] ? a.events.map((e) => ({ ...e, stream: a.stream })) : []));
      whole = inline!.statements(events, literal, grouped);
      if (whole === null) opening = inline!.opening(events, literal, grouped);
    }
  } catch (err) {
    throw new InlineProjectionError(streams.join(', '), err);
  }
  const conditions = appends.flatMap((a) => (a.condition ? [a.condition] : [])).sort((x, y) => (x.order < y.order ? -1 : x.order > y.order ? 1 : 0));
  const client = await pool.connect();
  let written: string[];
  try {
    written = whole ? await asMessageStatements(client, whole.statements) : [];
  } catch (err) {
    // PREPARE of a projector's statement failed: a bug in it, or the connection (which `cause` keeps: a 503).
    client.release(err as Error);
    whole!.refused(err, failedInProjection(err));
    throw new InlineProjectionError(streams.join(', '), err);
  }
  let required: string[];
  try {
    required = await asMessageStatements(client, conditions);
  } catch (err) {
    // PREPARE of a condition failed (nothing was sent with it: its state stays `unsent`).
    client.release(err as Error);
    throw err;
  }
  const locks = appends.length > 1 ? 1 : 0; // es_append locks a lone stream itself
  const applyAfter = withInline && whole === null;
  // A message that is the whole write is one implicit transaction (above); one followed by apply() opens its own.
  const message = [
    ...(applyAfter ? ['begin;'] : []),
    ...(locks
      ? [`select count(pg_advisory_xact_lock(1163084112, k)) from (select distinct hashtext(s) as k from unnest(array[${streams.map(literal).join(',')}]::text[]) s order by k) keys;`]
      : []),
    ...appends.map(
      (a, i) =>
        `select last_revision, last_transaction, last_position, now() as at from es_append(${literal(a.stream)}, ${expectedCode(a.expected)}, ${argumentsAsSql(args[i], literal)}, ${inlined[i]}, ${inlined[i] ? inline!.mark : 0}::smallint);`,
    ),
    ...(opening === null ? [] : [`${opening};`]),
    ...written,
    ...(applyAfter ? [] : required),
  ].join('\n');
  const first = (applyAfter ? 1 : 0) + locks; // the result of the first es_append
  let broken: Error | undefined;
  let refused: AppendRefused | null = null;
  const unknownBefore = conditions.map((c) => c.state === 'sent');
  /**
   * The attempt failed with `err`: nothing written, unless the connection failed with it, or an earlier attempt's
   * outcome is unknown and this refusal does not rule it out. A condition's refusal does: it runs after es_append,
   * which refuses events or a stream an earlier attempt stored.
   */
  const settle = (err: unknown) =>
    conditions.forEach((c, i) => (c.state = broken === undefined && (!unknownBefore[i] || refusedByCondition(err)) ? 'refused' : 'sent'));
  for (const c of conditions) c.state = 'sent';
  try {
    let rows: any[] = [];
    let seen: any[] = [];
    try {
      const answer = (await client.query(message)) as unknown as pg.QueryResult | pg.QueryResult[];
      const results = Array.isArray(answer) ? answer : [answer]; // a message of one statement has one result
      rows = results.slice(first, first + appends.length).map((r) => r.rows[0]);
      if (!applyAfter) seen = results.slice(results.length - conditions.length).map((r) => r.rows[0] ?? null);
    } catch (err) {
      // An implicit transaction ended with the message's failure (a connection that failed with it is not pooled
      // again); an explicit one is still open, aborted.
      if (applyAfter) await client.query('rollback').catch((e) => (broken = e));
      else if (outcomeUnknown(err)) broken = err as Error;
      settle(err);
      const inProjection = whole !== null && failedInProjection(err);
      whole?.refused(err, inProjection);
      if (inProjection) throw new InlineProjectionError(streams.join(', '), err);
      refused = new AppendRefused(err);
    }
    if (refused === null) {
      const recorded = appends.flatMap((a, i) =>
        inlined[i] ? asRecorded(a.stream, a.events, Number(rows[i].last_revision), rows[i].last_transaction, rows[i].last_position, rows[i].at) : [],
      );
      whole?.committed(recorded);
      if (applyAfter) {
        try {
          await inline!.apply(recorded, client, opening !== null, grouped);
        } catch (err) {
          await client.query('rollback').catch((e) => (broken = e));
          settle(err);
          // A lost connection stays recognisable through `cause` (the API answers 503 for it).
          throw new InlineProjectionError(streams.join(', '), err);
        }
        // The conditions go with the COMMIT, after every lock apply() took.
        try {
          const answer = (await client.query([...required, 'commit;'].join('\n'))) as unknown as pg.QueryResult | pg.QueryResult[];
          seen = (Array.isArray(answer) ? answer : [answer]).slice(0, conditions.length).map((r) => r.rows[0] ?? null);
        } catch (err) {
          // A condition refused (the COMMIT was not run: roll back), else the COMMIT's outcome is unknown.
          if (outcomeUnknown(err) || conditions.length === 0) throw err;
          await client.query('rollback').catch((e) => (broken = e));
          settle(err);
          refused = new AppendRefused(err);
        }
      }
      if (refused === null) {
        conditions.forEach((c, i) => {
          c.state = 'committed';
          c.seen = seen[i];
        });
        return rows.map((r) => ({ nextRevision: Number(r.last_revision), position: encodePosition(r.last_transaction, r.last_position) }));
      }
    }
  } catch (err) {
    // COMMIT failed: the connection is suspect, do not pool it again.
    if (!(err instanceof InlineProjectionError)) broken ??= err as Error;
    throw err;
  } finally {
    client.release(broken);
  }
  throw refused;
}

/** Statement names this store prepared on each connection with SQL PREPARE (`i_` and a digest of the text: one name, one text). */
const preparedInline = new WeakMap<pg.PoolClient, Set<string>>();
/** The name of each statement text seen (a few texts, sent at every inline write: digested once; forgotten past 100). */
const inlineNames = new Map<string, string>();

/**
 * Inline statements as the message's text: a prepared one is prepared on this connection the first time
 * (its own round trip, once per connection) and then run with EXECUTE and its literal arguments.
 */
async function asMessageStatements(client: pg.PoolClient, statements: InlineStatement[]): Promise<string[]> {
  let names = preparedInline.get(client);
  if (!names) preparedInline.set(client, (names = new Set()));
  const texts: string[] = [];
  for (const s of statements) {
    if ('text' in s) {
      texts.push(`${s.text};`);
      continue;
    }
    let name = inlineNames.get(s.sql);
    if (name === undefined) {
      if (inlineNames.size >= 100) inlineNames.clear();
      inlineNames.set(s.sql, (name = `i_${sha256Hex(s.sql).slice(0, 32)}`));
    }
    if (!names.has(name)) {
      await client.query(`prepare ${name} as ${s.sql}`);
      names.add(name);
    }
    texts.push(s.args.length > 0 ? `execute ${name}(${s.args.join(', ')});` : `execute ${name};`);
  }
  return texts;
}

/**
 * Whether a failed inline message failed in the projections' statements (a projector bug: the alert) rather
 * than in es_append (a conflict, an event id stored before: classified as in autocommit), in a condition's
 * refusal (ES010), or around them (the connection, the server shutting down or out of resources, a deadlock or
 * a serialization failure: SQLSTATE classes 08, 53, 57, 58, 40). PostgreSQL names the function an error came
 * from in its context (`where`), and only es_append's errors come from inside it.
 */
function failedInProjection(err: unknown): boolean {
  return (
    !outcomeUnknown(err) &&
    !String((err as pg.DatabaseError).where ?? '').includes('es_append(') &&
    !/^(40|53)/.test((err as pg.DatabaseError).code ?? '') &&
    !refusedByCondition(err)
  );
}

/**
 * Whether a statement's failure leaves its transaction's outcome unknown: the connection failed with it, or the
 * server is going away (SQLSTATE classes 08, 57, 58), rather than PostgreSQL refusing it (which rolls back).
 */
function outcomeUnknown(err: unknown): boolean {
  return !(err instanceof pg.DatabaseError) || /^(08|57|58)/.test(err.code ?? '');
}

/** Whether an append failed because its condition (AppendCondition) refused it: es_require's SQLSTATE (migration 0109). */
function refusedByCondition(err: unknown): boolean {
  return err instanceof pg.DatabaseError && err.code === 'ES010';
}

/**
 * An append as one message (appendAtomically): one whose events an inline projection reads (`inline`: its rows
 * commit with it), or one with a condition (its statement runs in the append's transaction).
 */
async function appendAsMessage(
  pool: pg.Pool,
  stream: string,
  events: NewEvent[],
  expected: ExpectedRevision,
  inline: InlineProjections | undefined,
  condition?: AppendCondition,
): Promise<AppendResult> {
  try {
    return (await appendAtomically(pool, [{ stream, events, expected, condition }], inline))[0];
  } catch (err) {
    if (!(err instanceof AppendRefused)) throw err;
    if (refusedByCondition(err.cause)) throw new ConditionFailedError(stream, err.cause);
    // Classified as in autocommit: an idempotent retry answers as then, a conflict is WrongExpectedVersionError.
    const result = await appendInTransaction(pool, stream, events, expected, err.cause);
    if (condition && result.replayed) {
      // Its events were stored by an earlier attempt of this very append (a group whose COMMIT's answer was
      // lost: append-groups.ts), which ran the condition with them.
      condition.state = 'committed';
      condition.seen = null;
    }
    return result;
  }
}

/** appendToStreams (types.ts): on a refusal, the stream that moved is named (whichStreamFailed). */
async function appendMany(pool: pg.Pool, appends: StreamAppend[], inline: InlineProjections | undefined): Promise<AppendResult[]> {
  try {
    return await appendAtomically(pool, appends, inline);
  } catch (err) {
    if (!(err instanceof AppendRefused)) throw err;
    if (refusedByCondition(err.cause)) throw new ConditionFailedError(appends.map((a) => a.stream).join(', '), err.cause);
    throw await whichStreamFailed(pool, appends, err.cause);
  }
}

/** The error of a failed appendMany: WrongExpectedVersionError on the stream that moved (or whose event id is stored), else the error itself. */
async function whichStreamFailed(db: Queryable, appends: StreamAppend[], err: any): Promise<unknown> {
  const isConflict = err?.code === 'ES001';
  const isDuplicateId = err?.code === '23505' && err.constraint === 'es_events_event_id_key';
  if (!isConflict && !isDuplicateId) return err;
  const { rows } = await db.query(
    `select s.stream_id, s.revision, exists (select from es_events e where e.event_id = any($2::uuid[]) and e.stream_id = s.stream_id) as stored
     from es_streams s where s.stream_id = any($1::text[])`,
    [appends.map((a) => a.stream), appends.flatMap((a) => a.events.map((e) => e.id))],
  );
  const head = new Map<string, { revision: number; stored: boolean }>(rows.map((r) => [r.stream_id, { revision: Number(r.revision), stored: r.stored }]));
  for (const a of appends) {
    const h = head.get(a.stream);
    const actual = h ? h.revision : 'no_stream';
    const moved =
      h?.stored ||
      (a.expected === 'no_stream' ? h !== undefined : a.expected === 'stream_exists' ? h === undefined : typeof a.expected === 'number' && a.expected !== actual);
    if (moved) return new WrongExpectedVersionError(a.stream, a.expected, actual);
  }
  // No stream of the call moved and none holds one of its ids (an id stored in another stream): not a conflict a reload resolves.
  return err;
}

/**
 * A page of the log read from es_events ($1, $2: the position after which, $3: the page's size): in log
 * order, and never past a transaction still running (its events could still come before the page's).
 */
const LOG_PAGE_AFTER = `where (transaction_id, global_position) > ($1::xid8, $2::bigint)
       and transaction_id < pg_snapshot_xmin(pg_current_snapshot())
     order by transaction_id, global_position
     limit $3`;

export async function readAllFrom(db: Queryable, after: string | null, limit: number): Promise<RecordedEvent[]> {
  const { tx, pos } = decodePosition(after);
  // Named (planned once per connection): the log's tail is read after every write that is alone, and parsing
  // and planning the text cost PostgreSQL 110 to 170 us of CPU against about 40 us of running it
  // (docs/performance.md "The log's tail read as a named statement"). The one plan suits every page: the log's
  // order is the index es_events_log_order's and the LIMIT stops its scan (the generic plan, checked with
  // plan_cache_mode = force_generic_plan on 200,000 events, is that index scan for every position and limit).
  const { rows } = await db.query({ name: 'es_read_all', text: `select ${EVENT_COLUMNS} from es_events ${LOG_PAGE_AFTER}`, values: [tx, pos, limit] });
  return rows.map(toRecorded);
}

/**
 * readAllText (types.ts): the same page as readAllFrom, with data and
 * metadata as the text stored (the RFC 8785 text the hash covers, migration
 * 0103; the driver parses nothing): every event's, or with `organizationId`
 * only that organization's and the others as bare positions. An export then
 * costs no JSON.parse and no JSON.stringify per event, and `audit verify`
 * hashes the text without printing it again.
 */
export async function readAllTextFrom(db: Queryable, after: string | null, limit: number, organizationId: string | null): Promise<TextLogEntry[]> {
  const { tx, pos } = decodePosition(after);
  let rows: any[];
  try {
    ({ rows } = await db.query({
      // Each derived value is computed once per row: without `offset 0` PostgreSQL copies a subquery into
      // every column that uses it, and a `json` value is text that each operator parses again (measured:
      // a third of the speed).
      text: `select e.transaction_id, e.global_position, m.mine,
                case when m.mine then e.stream_id end as stream_id, case when m.mine then e.revision end as revision,
                case when m.mine then e.event_id end as event_id, case when m.mine then e.type end as type,
                case when m.mine then e.hash end as hash, case when m.mine then o.organization_id end as organization_id,
                case when m.mine then (e.metadata->'occurred_at')::text end as occurred_at, case when m.mine then (e.metadata->'actor')::text end as actor,
                case when m.mine then e.data::text end as data, case when m.mine then e.metadata::text end as metadata
         from es_events e
         cross join lateral (select e.metadata->'organization_id' as member offset 0) j
         cross join lateral (select case when json_typeof(j.member) = 'string' then j.member #>> '{}' end as organization_id offset 0) o
         cross join lateral (select $4::text is null or o.organization_id = $4 as mine offset 0) m
         ${LOG_PAGE_AFTER}`,
      values: [tx, pos, limit, organizationId],
    }));
  } catch (err) {
    // A `json` column takes text its operators refuse (an escaped NUL or lone surrogate: the service never
    // stores one, someone editing the table may): that page is read as plain text and sorted out here.
    if (!String((err as { code?: unknown }).code ?? '').startsWith('22')) throw err;
    return readAllTextPlain(db, tx, pos, limit, organizationId);
  }
  return rows.map((r) => textEntry(r, r.mine, { organization_id: r.organization_id, occurred_at: jsonMember(r.occurred_at), actor: jsonMember(r.actor) }));
}

/** An entry of readAllText from a row of es_events (data and metadata as text) and what was read of its metadata. */
function textEntry(r: any, mine: boolean, meta: { organization_id: string | null; occurred_at: unknown; actor: unknown }): TextLogEntry {
  return {
    position: encodePosition(r.transaction_id, r.global_position),
    event: mine ? { id: r.event_id, stream: r.stream_id, revision: Number(r.revision), type: r.type, hash: r.hash, ...meta, data: r.data, metadata: r.metadata } : null,
  };
}

/** readAllTextFrom's page without a JSON operator in the query: the metadata parsed here, by JavaScript's rules. */
async function readAllTextPlain(db: Queryable, tx: string, pos: string, limit: number, organizationId: string | null): Promise<TextLogEntry[]> {
  const { rows } = await db.query(
    `select transaction_id, global_position, stream_id, revision, event_id, type, hash, data::text as data, metadata::text as metadata
     from es_events ${LOG_PAGE_AFTER}`,
    [tx, pos, limit],
  );
  return rows.map((r) => {
    let meta: Record<string, unknown> | null = null;
    try {
      const parsed = JSON.parse(r.metadata);
      meta = parsed !== null && typeof parsed === 'object' ? parsed : null;
    } catch {
      // not JSON by JavaScript's rules either: no organization can be read from it
    }
    const org = typeof meta?.organization_id === 'string' ? meta.organization_id : null;
    return textEntry(r, organizationId === null || org === organizationId, { organization_id: org, occurred_at: meta?.occurred_at, actor: meta?.actor });
  });
}

/** A metadata member read as JSON text: undefined when the key is absent (SQL null), else its value (JSON null included). */
function jsonMember(text: string | null): unknown {
  return text === null ? undefined : JSON.parse(text);
}

export interface PostgresStoreOptions {
  /** Read models written in the append's transaction (src/projections/inline.ts). */
  inline?: InlineProjections;
  /**
   * Whether a creation (an append whose stream is new) made now goes in a
   * group of creations (AppendGroups, append-groups.ts) rather than in a
   * transaction of its own (asked as it starts; default: never). Either way
   * its inline rows commit with it. INLINE_PROJECTIONS=auto groups them
   * while other requests are in progress: a group writes many new rows in one
   * statement and commits once (docs/architecture.md "Creations under load").
   */
  groupCreations?: () => boolean;
}

/** The `$checkpoint` marker of a filtered read (types.ts, SubscribeOptions.types). */
export const CHECKPOINT_MARKER = '$checkpoint';

/**
 * readAll restricted to `types` in the query (a log consumer reads and parses
 * only what it handles): the page of matching events, and when the page is
 * short (it reached the readable end of the log), the position of the newest
 * readable event as a `$checkpoint` marker, so the consumer's checkpoint
 * moves past the events it skipped. One statement.
 */
export async function readTypesFrom(db: Queryable, after: string | null, limit: number, types: readonly string[]): Promise<RecordedEvent[]> {
  const { tx, pos } = decodePosition(after);
  const { rows } = await db.query(
    `with page as (
       select ${EVENT_COLUMNS} from es_events
       where (transaction_id, global_position) > ($1::xid8, $2::bigint)
         and transaction_id < pg_snapshot_xmin(pg_current_snapshot())
         and type = any($4::text[])
       order by transaction_id, global_position
       limit $3)
     select * from page
     union all
     select * from (
       select global_position, transaction_id, null::text, null::bigint, null::uuid, '${CHECKPOINT_MARKER}', null::json, null::json, null::text, null::timestamptz, 0::smallint
       from es_events
       where transaction_id < pg_snapshot_xmin(pg_current_snapshot())
         and (transaction_id, global_position) > ($1::xid8, $2::bigint)
         and (select count(*) from page) < $3
       order by transaction_id desc, global_position desc
       limit 1) head
     where not exists (select from page p where (p.transaction_id, p.global_position) = (head.transaction_id, head.global_position))`,
    [tx, pos, limit, types],
  );
  return rows.map(toRecorded);
}

export async function createPostgresEventStore(pool: pg.Pool, url?: string, storeOptions: PostgresStoreOptions = {}): Promise<EventStore> {
  const connectionUrl = url ?? (pool.options as any).connectionString;
  const notifier = new Notifier(connectionUrl, 'es_appended');
  const subscriptions = new Set<{ stop(): Promise<void> }>();
  // Wakes log consumers in the other processes once an append has committed (this one's are told
  // directly, below): sent only while another process listens (listener-census.ts).
  const census = listenerCensus(pool, pool);
  const appended = new CoalescedNotify(pool, 'es_appended', undefined, () => census.othersListen('es_appended', notifier));
  // One reader of the log's tail for all of this process's subscriptions.
  const tail = new LogTail({ read: (cp, n) => readAllFrom(pool, cp, n), notifier });

  const { inline } = storeOptions;
  const groups = inline && new AppendGroups({
    together: (appends) => appendAtomically(pool, appends, inline, true),
    alone: (a) => appendAsMessage(pool, a.stream, a.events, a.expected, inline, a.condition),
  });

  /**
   * One append, with the inline projections or without (the view withoutInlineProjections returns), under a
   * condition or not (the view withCondition returns).
   */
  const appendOne = async (
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
    projections: InlineProjections | undefined,
    condition?: AppendCondition,
  ): Promise<AppendResult> => {
    const handled = projections !== undefined && events.some((e) => projections.handles(e.type));
    const result =
      !handled && condition === undefined
        ? await appendInTransaction(pool, stream, events, expected)
        : handled && groups && expected === 'no_stream' && storeOptions.groupCreations?.()
          ? await groups.append({ stream, events, expected, condition })
          : await appendAsMessage(pool, stream, events, expected, handled ? projections : undefined, condition);
    tail.appended(result.position); // this process's consumers: at once
    appended.signal(result.position); // the other processes' (while any listens): by NOTIFY
    return result;
  };
  const appendSeveral = async (appends: StreamAppend[], projections: InlineProjections | undefined): Promise<AppendResult[]> => {
    const results = await appendMany(pool, appends, projections);
    const last = results.map((r) => r.position).reduce((a, b) => (comparePositions(a, b) >= 0 ? a : b));
    tail.appended(last);
    appended.signal(last);
    return results;
  };

  const store: EventStore = {
    kind: 'postgres',
    appendToStream: (stream, events, expected) => appendOne(stream, events, expected, inline),
    appendToStreams: (appends) => appendSeveral(appends, inline),

    async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
      const backwards = options.direction === 'backwards';
      const from = options.fromRevision ?? (backwards ? Number.MAX_SAFE_INTEGER : 0);
      // Named (planned once per connection): every command on an existing stream reads it first. The one plan
      // suits every stream: the unique (stream_id, revision) index, one stream's events.
      const { rows } = await pool.query({
        name: backwards ? 'es_read_stream_backwards' : 'es_read_stream',
        text: `select ${EVENT_COLUMNS} from es_events where stream_id = $1 and revision ${backwards ? '<=' : '>='} $2
               order by revision ${backwards ? 'desc' : 'asc'} limit $3`,
        values: [stream, from, options.maxCount ?? null],
      });
      return rows.map(toRecorded);
    },

    readAll: (after, limit) => readAllFrom(pool, after, limit),

    readAllText: (after, limit, organizationId) => readAllTextFrom(pool, after, limit, organizationId),

    subscribeToAll(after, handler, options = {}) {
      const sub = subscribeByPolling({
        after,
        handler,
        batchSize: options.batchSize ?? 500,
        onError: options.onError,
        // Behind the shared tail, a consumer reads only its own event types (and their JSON).
        read: options.types ? (cp, n) => readTypesFrom(pool, cp, n, options.types!) : (cp, n) => readAllFrom(pool, cp, n),
        tail,
      });
      subscriptions.add(sub);
      return {
        stop: async () => {
          subscriptions.delete(sub);
          await sub.stop();
        },
      };
    },

    async headPosition() {
      const { rows } = await pool.query(
        `select transaction_id, global_position from es_events
         where transaction_id < pg_snapshot_xmin(pg_current_snapshot())
         order by transaction_id desc, global_position desc limit 1`,
      );
      return rows[0] ? encodePosition(rows[0].transaction_id, rows[0].global_position) : null;
    },

    async close() {
      await Promise.all([...subscriptions].map((s) => s.stop()));
      await tail.close();
      await appended.close();
      await notifier.close();
    },
  };
  if (inline) {
    // The same pool, tail and notifications: only the appends differ. The store it came from owns them (and closes them).
    const view: EventStore = {
      ...store,
      appendToStream: (stream, events, expected) => appendOne(stream, events, expected, undefined),
      appendToStreams: (appends) => appendSeveral(appends, undefined),
      async close() {},
    };
    store.withoutInlineProjections = () => view;
  }
  // Every append of this view runs the condition; it offers no way around it (no view without it).
  store.withCondition = (condition) => ({
    ...store,
    appendToStream: (stream, events, expected) => appendOne(stream, events, expected, inline, condition),
    appendToStreams: (appends) => appendSeveral(appends.map((a, i) => (i === 0 ? { ...a, condition } : a)), inline),
    withoutInlineProjections: undefined,
    withCondition: undefined,
    async close() {},
  });
  return store;
}
