/**
 * The one command runner: every command of every aggregate (invoices,
 * customers, organizations, and any new one) goes through `runCommand`:
 * load the stream, fold it, decide, append at the expected revision.
 *
 * - **Retries.** A concurrent writer makes the append fail; the runner loads
 *   again and decides again, after a short jittered pause, up to
 *   MAX_ATTEMPTS times. When they run out the client gets 409
 *   VERSION_CONFLICT with `current_version` (docs/api-decisions.md), never
 *   a 500: nothing was written, and reading then retrying is safe.
 * - **If-Match.** With `ifMatch` (the client's If-Match) a stale revision is
 *   VERSION_CONFLICT at once: the client asked for that exact version.
 * - **Idempotent commands.** `commandId` (derived from the request's
 *   Idempotency-Key) is the id of the first event appended; an attempt that
 *   finds it in the stream answers the state as it is, since an earlier
 *   attempt (one that died before answering) did the work. Creates use it
 *   too: their decider decides nothing on an existing stream.
 * - **Tenancy.** `guard` refuses a stream the caller may not act on (another
 *   organization's id is NOT_FOUND), on every load, before the decider runs.
 * - **Time moves forward in a stream.** A command is stamped with the time
 *   its request arrived, unless the stream's last event is later (a request
 *   that waited or retried behind another writer): then with that event's
 *   time (`notBefore`). A change cannot happen before the state it builds
 *   on, so an auditor never reads a finalized_at before the edit it froze.
 *
 * Enrichment (read-model facts a decision needs) happens before the runner,
 * in the handler's entry, and arrives inside the command; `command` may be a
 * function of the state only for a fact that depends on the state and must
 * be re-read on conflict (say why where you do it).
 *
 * The invoice numbering stream (src/commands/invoicenumber/handler.ts) is the
 * one deliberate exception: a hot stream with its own cache and batching.
 */
import { v7 as uuidv7 } from 'uuid';
import type { AppendResult, EventMetadata, EventStore, ExpectedRevision, NewEvent, RecordedEvent } from '../../eventstore/types.ts';
import { WrongExpectedVersionError } from '../../eventstore/types.ts';
import { DomainError, notFound } from '../../shared/errors.ts';
import type { CommandMetadata } from '../command.ts';
import { fold, type Decider, type DomainEvent } from './decider.ts';

/** Attempts of one command under contention (each after a reload). */
export const MAX_ATTEMPTS = 8;

/** A stream as read: its events, their fold, and where it ends (-1 and null when absent). */
export interface LoadedStream<S> {
  recorded: RecordedEvent[];
  state: S;
  revision: number;
  position: string | null;
}

export interface RunOptions<S, E = DomainEvent> {
  metadata: EventMetadata;
  /** Expected stream revision from If-Match. */
  ifMatch?: number;
  /** Id of the first event, the same on every attempt of one request (see above). */
  commandId?: string;
  /** The stream as the caller just read it (its checks ran on it): the first attempt decides on it without reading again. */
  known?: LoadedStream<S>;
  /** Throws (NOT_FOUND) when the caller may not act on this stream; runs on every load of the runner's own. */
  guard?: (loaded: LoadedStream<S>) => void;
  /** Names the resource in VERSION_CONFLICT messages ('invoice', 'customer', ...). */
  what?: string;
  /**
   * Appends in place of store.appendToStream, for the one command whose
   * append carries events decided after its own: finalize on PostgreSQL adds
   * the completion, once the number is known, and appends it with the
   * number's event in one transaction (src/commands/invoice/handler-finalize.ts).
   * Gets the events to append, their expected revision, and the decided
   * events with the state they apply to; returns the stream's append result
   * and every event the stream received, the decided ones first. A
   * WrongExpectedVersionError it throws for this stream is retried as any.
   */
  append?: (events: NewEvent[], expected: ExpectedRevision, decided: E[], state: S) => Promise<{ result: AppendResult; appended: E[] }>;
}

export interface RunResult<E, S> {
  /** Events this command appended ([] when the decider decided nothing). */
  events: E[];
  state: S;
  /** Stream revision after the command (-1: stream still absent). */
  revision: number;
  /** Log position to wait for (read your writes): what was appended, else the stream's last event; null when the stream is absent. */
  position: string | null;
  /**
   * The stream's events the command decided on, as loaded ([] for a new
   * stream, or where the caller passed a state it knew without its events:
   * a finalize's completion): which of them were written inline says
   * whether a read model built from several of them holds them all
   * (src/api/schedules.ts).
   */
  earlier: readonly RecordedEvent[];
}

/** Reads a stream and folds it: the one loader behind every command. */
export async function loadStream<C, E extends DomainEvent, S>(
  store: EventStore,
  stream: string,
  decider: Decider<C, E, S>,
): Promise<LoadedStream<S>> {
  const recorded = await store.readStream(stream);
  const state = fold(decider, recorded.map((r) => ({ type: r.type, data: r.data }) as E));
  const last = recorded.at(-1);
  return { recorded, state, revision: last ? last.revision : -1, position: last ? last.position : null };
}

/** A stream that does not exist yet, for a create's first attempt (it appends without reading). */
export function absentStream<S>(initialState: S): LoadedStream<S> {
  return { recorded: [], state: initialState, revision: -1, position: null };
}

/**
 * Guard: the stream's first event belongs to `organizationId` (streams have
 * global ids, so another organization's id must not reach the decider).
 * `mustExist`: an absent stream is NOT_FOUND too (every command but a create).
 */
export function ownedBy(organizationId: string, what: string, mustExist = true): (loaded: LoadedStream<unknown>) => void {
  return ({ recorded }) => {
    if (recorded.length === 0 ? mustExist : recorded[0].metadata.organization_id !== organizationId) throw notFound(what);
  };
}

/** A stream whose first event belongs to `organizationId`, or NOT_FOUND (`what`). */
export async function loadOwnedStream<C, E extends DomainEvent, S>(
  store: EventStore,
  stream: string,
  decider: Decider<C, E, S>,
  organizationId: string,
  what: string,
): Promise<LoadedStream<S> & { position: string }> {
  const loaded = await loadStream(store, stream, decider);
  ownedBy(organizationId, what)(loaded);
  return loaded as LoadedStream<S> & { position: string };
}

/** The stream is at `revision`, not at the version the client named (or a concurrent writer got there first). */
export function versionConflict(revision: number, expected: number | null, what = 'resource'): DomainError {
  const message =
    expected === null
      ? `The ${what} was changed by other requests on every one of ${MAX_ATTEMPTS} attempts; it is at version ${revision}. Read it again and retry.`
      : `The ${what} is at version ${revision}, not ${expected}. Read it again and retry.`;
  return new DomainError('VERSION_CONFLICT', message, { current_version: revision });
}

/** Throws VERSION_CONFLICT when the client sent If-Match and the stream is elsewhere. */
export function checkIfMatch(ifMatch: number | undefined, revision: number, what?: string): void {
  if (ifMatch !== undefined && ifMatch !== revision) throw versionConflict(revision, ifMatch, what);
}

/** A short random pause before attempt `attempt`, so contending writers spread out instead of colliding again. */
function backoff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** attempt)));
}

/** `at` if it is not before `floor` (ISO 8601 instants), else `floor` written as `at` is (UTC, milliseconds). */
export function notBefore(at: string, floor: string | undefined): string {
  const limit = floor === undefined ? NaN : Date.parse(floor);
  return limit > Date.parse(at) ? new Date(limit).toISOString() : at;
}

export async function runCommand<C extends { metadata: CommandMetadata }, E extends DomainEvent, S>(
  store: EventStore,
  stream: string,
  decider: Decider<C, E, S>,
  command: C | ((state: S) => C | Promise<C>),
  options: RunOptions<S, E>,
): Promise<RunResult<E, S>> {
  const { metadata, ifMatch, commandId, guard, what } = options;
  for (let attempt = 1; ; attempt++) {
    const loaded = attempt === 1 && options.known ? options.known : await loadStream(store, stream, decider);
    if (loaded !== options.known) guard?.(loaded); // the caller checked what it passed as known
    const { recorded, state, revision, position } = loaded;
    if (commandId && recorded.some((r) => r.id === commandId)) return { events: [], state, revision, position, earlier: recorded };
    checkIfMatch(ifMatch, revision, what);
    const built = typeof command === 'function' ? await (command as (s: S) => C | Promise<C>)(state) : command;
    const floor = recorded.at(-1)?.metadata.occurred_at;
    const at = notBefore(metadata.occurred_at, floor);
    const now = notBefore(built.metadata.now, floor);
    const stamped = now === built.metadata.now ? built : { ...built, metadata: { ...built.metadata, now } };
    const decided = decider.decide(stamped, state);
    if (decided.length === 0) return { events: [], state, revision, position, earlier: recorded };
    const eventMetadata = at === metadata.occurred_at ? metadata : { ...metadata, occurred_at: at };
    const events: NewEvent[] = decided.map((e, i) => ({
      id: i === 0 && commandId ? commandId : uuidv7(),
      type: e.type,
      data: e.data,
      metadata: eventMetadata,
    }));
    try {
      const expected = revision === -1 ? 'no_stream' : revision;
      const { result, appended } = options.append
        ? await options.append(events, expected, decided, state)
        : { result: await store.appendToStream(stream, events, expected), appended: decided };
      if (result.replayed) {
        // An earlier attempt with the same command id stored its events: the state is theirs, not this attempt's
        // decision (whose timestamps differ), and this call appended nothing.
        const stored = await loadStream(store, stream, decider);
        return { events: [], state: stored.state, revision: stored.revision, position: stored.position, earlier: stored.recorded };
      }
      return { events: appended, state: appended.reduce(decider.evolve, state), revision: result.nextRevision, position: result.position, earlier: recorded };
    } catch (err) {
      if (!(err instanceof WrongExpectedVersionError) || err.stream !== stream) throw err;
      const actual = typeof err.actual === 'number' ? err.actual : -1;
      if (ifMatch !== undefined) throw versionConflict(actual, ifMatch, what);
      if (attempt >= MAX_ATTEMPTS) throw versionConflict(actual, null, what);
      await backoff(attempt);
    }
  }
}
