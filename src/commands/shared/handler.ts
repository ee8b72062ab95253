/**
 * Runs a command against one stream: load, fold, decide, append at the
 * expected revision. A concurrent writer makes the append fail; we then load
 * again and decide again (a few times), so writers never overwrite each other.
 * With `ifMatch` (the client's If-Match) a stale revision is VERSION_CONFLICT
 * instead of a retry: the client asked for that exact version.
 */
import { v7 as uuidv7 } from 'uuid';
import type { EventMetadata, EventStore, NewEvent, RecordedEvent } from '../../eventstore/types.ts';
import { WrongExpectedVersionError } from '../../eventstore/types.ts';
import { DomainError, notFound } from '../../shared/errors.ts';
import { fold, type Decider, type DomainEvent } from './decider.ts';

export interface ExecuteOptions<S = unknown> {
  metadata: EventMetadata;
  /** The stream as the caller just read it (its checks ran on it): the first attempt decides on it without reading again. */
  known?: LoadedStream<S>;
  /** Expected stream revision from If-Match; -1 means "must not exist". */
  ifMatch?: number;
  retries?: number;
  /**
   * Id of the first event, the same on every attempt of one request (derived
   * from its Idempotency-Key): an attempt that finds it in the stream answers
   * the state as it is, since an earlier attempt (one that died before
   * answering) did the work.
   */
  commandId?: string;
}

export interface ExecuteResult<E, S> {
  /** Events this command appended ([] when the decider decided nothing). */
  events: E[];
  state: S;
  /** Stream revision after the command (-1: stream still absent). */
  revision: number;
  /** Log position to wait for (read your writes); null when nothing was appended. */
  position: string | null;
}

/** A stream as read: its events, their fold, and where it ends (-1 and null when absent). */
export interface LoadedStream<S> {
  recorded: RecordedEvent[];
  state: S;
  revision: number;
  position: string | null;
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

/**
 * A stream whose first event belongs to `organizationId`, or NOT_FOUND (`what`):
 * streams have global ids, so another organization's id must not reach the decider.
 */
export async function loadOwnedStream<C, E extends DomainEvent, S>(
  store: EventStore,
  stream: string,
  decider: Decider<C, E, S>,
  organizationId: string,
  what: string,
): Promise<LoadedStream<S> & { position: string }> {
  const loaded = await loadStream(store, stream, decider);
  if (loaded.recorded.length === 0 || loaded.recorded[0].metadata.organization_id !== organizationId) throw notFound(what);
  return loaded as LoadedStream<S> & { position: string };
}

/** If-Match names a version the stream is no longer (or not yet) at. */
export function versionConflict(revision: number, expected: number, what = 'resource'): DomainError {
  return new DomainError('VERSION_CONFLICT', `The ${what} is at version ${revision}, not ${expected}. Read it again and retry.`, {
    current_version: revision,
  });
}

/** Throws VERSION_CONFLICT when the client sent If-Match and the stream is elsewhere. */
export function checkIfMatch(ifMatch: number | undefined, revision: number, what?: string): void {
  if (ifMatch !== undefined && ifMatch !== revision) throw versionConflict(revision, ifMatch, what);
}

export async function execute<C, E extends DomainEvent, S>(
  store: EventStore,
  stream: string,
  decider: Decider<C, E, S>,
  command: C,
  options: ExecuteOptions<S>,
): Promise<ExecuteResult<E, S>> {
  const attempts = options.retries ?? 5;
  for (let attempt = 1; ; attempt++) {
    const loaded = attempt === 1 && options.known ? options.known : await loadStream(store, stream, decider);
    const { recorded, state, revision, position } = loaded;
    if (options.commandId && recorded.some((r) => r.id === options.commandId)) {
      return { events: [], state, revision, position };
    }
    checkIfMatch(options.ifMatch, revision);
    const decided = decider.decide(command, state);
    if (decided.length === 0) return { events: [], state, revision, position: null };
    const events: NewEvent[] = decided.map((e, i) => ({
      id: i === 0 && options.commandId ? options.commandId : uuidv7(),
      type: e.type,
      data: e.data,
      metadata: options.metadata,
    }));
    try {
      const result = await store.appendToStream(stream, events, revision === -1 ? 'no_stream' : revision);
      const next = decided.reduce(decider.evolve, state);
      return { events: decided, state: next, revision: result.nextRevision, position: result.position };
    } catch (err) {
      if (!(err instanceof WrongExpectedVersionError)) throw err;
      if (options.ifMatch !== undefined) {
        throw new DomainError('VERSION_CONFLICT', 'The resource was changed by another request. Read it again and retry.');
      }
      if (attempt >= attempts) throw err;
    }
  }
}
