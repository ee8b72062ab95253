/**
 * How recovery tells whether a reservation's owner really holds its value.
 * Each kind has one check that reads the owner's stream through the event
 * store port (e.g. orgice: does organization-<owner> exist with this ICE?).
 * The checks are handed to the recovery worker by the composition root
 * (src/main.ts). A kind without a check is never released by recovery:
 * keeping a stale claim is safe, freeing a live one is not.
 */
import type { EventStore } from '../../eventstore/types.ts';
import type { ReservedValue } from './write.ts';

/** True when `owner` exists and currently holds `value` (scope is the stream prefix). */
export type HolderCheck = (store: EventStore, owner: string, value: string, scope: string) => Promise<boolean>;

/** The holder check of each reservation kind. */
export type HolderChecks = Readonly<Record<string, HolderCheck>>;

/**
 * Whether `owner` holds a value, by its kind's check in `checks` (false for a kind without one): what a failed
 * write asks before undoing its claim (ReservationPlan.holds), the same question recovery asks.
 */
export function heldBy(checks: HolderChecks, store: EventStore, owner: string): (value: ReservedValue) => Promise<boolean> {
  return async (v) => (await checks[v.scope.kind]?.(store, owner, v.value, v.scope.prefix)) ?? false;
}
