/**
 * Reservation streams (docs/architecture.md "Invariants across streams"): one stream per reserved value,
 * holding its current owner. EventStoreDB appends atomically to one stream
 * only, so "this value belongs to one owner" is kept by appending to the
 * value's own stream at an expected revision, on either adapter.
 *
 * A scope names a family of values: `orgice` (organization ICE, platform
 * wide), `customerice-<org>` (customer ICE within an organization),
 * `orgslot-<account>` (an account's entity slots, for the plan's cap).
 * Streams are `<scope>-<value>`, so EventStoreDB's category is the kind.
 */
import type { DomainEvent } from '../shared/decider.ts';

export interface ReservationScope {
  /** The family, e.g. 'orgice'; recovery finds the owner check by it. */
  kind: string;
  /** Stream prefix: the kind, plus the tenant when values are unique per tenant. */
  prefix: string;
}

interface ReservationData {
  kind: string;
  scope: string;
  value: string;
  owner: string;
}

/** The value now belongs to `owner` (appended with no_stream, or after a release). */
export type ReservationClaimed = DomainEvent<'ReservationClaimed', ReservationData>;
/**
 * The owner is about to give the value up (written before the owner's stream
 * changes): if the process dies before the release, recovery sees this and
 * checks whether the owner still holds the value. The owner does not change.
 */
export type ReservationReleaseIntended = DomainEvent<'ReservationReleaseIntended', ReservationData>;
/** The value is free again. */
export type ReservationReleased = DomainEvent<'ReservationReleased', ReservationData>;

export type ReservationEvent = ReservationClaimed | ReservationReleaseIntended | ReservationReleased;

export const RESERVATION_EVENT_TYPES = ['ReservationClaimed', 'ReservationReleaseIntended', 'ReservationReleased'] as const;

export interface ReservationState {
  owner: string | null;
  /** Revision of the stream's last event (-1: no stream). */
  revision: number;
}

export const freeReservation: ReservationState = { owner: null, revision: -1 };

export function evolveReservation(state: ReservationState, event: ReservationEvent): ReservationState {
  const revision = state.revision + 1;
  if (event.type === 'ReservationClaimed') return { owner: event.data.owner, revision };
  if (event.type === 'ReservationReleased') return { owner: null, revision };
  return { ...state, revision };
}

export function reservationStream(scope: ReservationScope, value: string): string {
  return `${scope.prefix}-${value}`;
}

/** Organization ICE: one legal entity per ICE on the whole platform. */
export const ORGANIZATION_ICE: ReservationScope = { kind: 'orgice', prefix: 'orgice' };

/** Customer ICE: unique within one organization. */
export function customerIceScope(organizationId: string): ReservationScope {
  return { kind: 'customerice', prefix: `customerice-${organizationId}` };
}

/** An account's entity slots 1..cap (values are slot numbers). */
export function organizationSlotScope(accountId: string): ReservationScope {
  return { kind: 'orgslot', prefix: `orgslot-${accountId}` };
}
