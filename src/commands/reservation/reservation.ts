/**
 * The reservation protocol on the event store port (no SQL, so it holds on
 * both adapters). claim: append ReservationClaimed with no_stream, or at the
 * revision whose last event freed the value; a concurrent claimer makes the
 * append fail, and the next read shows who won. The same owner claiming again
 * is a no-op, so retried commands are safe. release: only the current owner
 * can free a value; anyone else's release does nothing.
 */
import { v7 as uuidv7 } from 'uuid';
import type { EventMetadata, EventStore } from '../../eventstore/types.ts';
import { WrongExpectedVersionError } from '../../eventstore/types.ts';
import { validationError } from '../../shared/errors.ts';
import {
  evolveReservation,
  freeReservation,
  reservationStream,
  type ReservationEvent,
  type ReservationScope,
  type ReservationState,
} from './events.ts';

/** The value belongs to another owner. */
export class ReservationTakenError extends Error {
  constructor(readonly scope: ReservationScope, readonly value: string, readonly owner: string) {
    super(`${reservationStream(scope, value)} is held by ${owner}`);
    this.name = 'ReservationTakenError';
  }
}

/** 'claimed': this call took it; 'already_held': the owner had it before (nothing appended). */
export type ClaimOutcome = 'claimed' | 'already_held';

// Each conflict means another writer changed the stream; a handful always settles it.
const ATTEMPTS = 10;

export async function readReservation(store: EventStore, scope: ReservationScope, value: string): Promise<ReservationState> {
  const recorded = await store.readStream(reservationStream(scope, value));
  return recorded.reduce((s, r) => evolveReservation(s, { type: r.type, data: r.data } as ReservationEvent), freeReservation);
}

async function append(
  store: EventStore,
  type: ReservationEvent['type'],
  scope: ReservationScope,
  value: string,
  owner: string,
  revision: number,
  metadata: EventMetadata,
): Promise<void> {
  const event = { id: uuidv7(), type, data: { kind: scope.kind, scope: scope.prefix, value, owner }, metadata };
  await store.appendToStream(reservationStream(scope, value), [event], revision === -1 ? 'no_stream' : revision);
}

/** Retries `step` while concurrent appends move the stream under it. */
async function onFreshState<T>(
  store: EventStore,
  scope: ReservationScope,
  value: string,
  step: (state: ReservationState) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const state = await readReservation(store, scope, value);
    try {
      return await step(state);
    } catch (err) {
      if (!(err instanceof WrongExpectedVersionError) || attempt >= ATTEMPTS) throw err;
    }
  }
}

/** Takes `value` for `owner`; throws ReservationTakenError when someone else holds it. */
export function claim(
  store: EventStore,
  scope: ReservationScope,
  value: string,
  owner: string,
  metadata: EventMetadata,
): Promise<ClaimOutcome> {
  return onFreshState(store, scope, value, async (state) => {
    if (state.owner === owner) return 'already_held';
    if (state.owner !== null) throw new ReservationTakenError(scope, value, state.owner);
    await append(store, 'ReservationClaimed', scope, value, owner, state.revision, metadata);
    return 'claimed';
  });
}

/** Appends `type` when `owner` holds `value`; returns whether it did. */
function whileOwner(
  type: 'ReservationReleased' | 'ReservationReleaseIntended',
  store: EventStore,
  scope: ReservationScope,
  value: string,
  owner: string,
  metadata: EventMetadata,
): Promise<boolean> {
  return onFreshState(store, scope, value, async (state) => {
    if (state.owner !== owner) return false;
    await append(store, type, scope, value, owner, state.revision, metadata);
    return true;
  });
}

/** Frees `value` if `owner` holds it; returns whether it did. */
export function release(store: EventStore, scope: ReservationScope, value: string, owner: string, metadata: EventMetadata): Promise<boolean> {
  return whileOwner('ReservationReleased', store, scope, value, owner, metadata);
}

/** Records that `owner` is about to give `value` up (see ReservationReleaseIntended). */
export function intendRelease(store: EventStore, scope: ReservationScope, value: string, owner: string, metadata: EventMetadata): Promise<boolean> {
  return whileOwner('ReservationReleaseIntended', store, scope, value, owner, metadata);
}

/**
 * Claims the first free value of 1..count (entity slots under a plan's cap),
 * trying them from `start` (0-based, wrapping around; 0 tries 1 first);
 * returns the slot, or null when every one is held by someone else.
 */
export async function claimFirstFree(
  store: EventStore,
  scope: ReservationScope,
  count: number,
  owner: string,
  metadata: EventMetadata,
  start = 0,
): Promise<number | null> {
  for (let i = 0; i < count; i++) {
    const slot = ((start + i) % count) + 1;
    try {
      await claim(store, scope, String(slot), owner, metadata);
      return slot;
    } catch (err) {
      if (!(err instanceof ReservationTakenError)) throw err;
    }
  }
  return null;
}

/** The answer to a duplicate ICE (docs/api-decisions.md "Errors"). */
export function iceAlreadyUsed(): Error {
  return validationError([{ field: 'ice', message: 'already used' }], 'This ICE is already used.');
}

/** Claims an ICE; a duplicate is VALIDATION_ERROR on field `ice`, message `already used`. */
export async function claimIce(
  store: EventStore,
  scope: ReservationScope,
  ice: string,
  owner: string,
  metadata: EventMetadata,
): Promise<ClaimOutcome> {
  try {
    return await claim(store, scope, ice, owner, metadata);
  } catch (err) {
    throw err instanceof ReservationTakenError ? iceAlreadyUsed() : err;
  }
}
