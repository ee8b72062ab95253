/**
 * How recovery tells whether a reservation's owner really holds its value.
 * Each kind registers one check that reads the owner's stream through the
 * event store port (e.g. orgice: does organization-<owner> exist with this
 * ICE?). A kind without a registered check is never released by recovery:
 * keeping a stale claim is safe, freeing a live one is not.
 */
import type { EventStore } from '../../eventstore/types.ts';

/** True when `owner` exists and currently holds `value` (scope is the stream prefix). */
export type HolderCheck = (store: EventStore, owner: string, value: string, scope: string) => Promise<boolean>;

const checks = new Map<string, HolderCheck>();

export function registerHolderCheck(kind: string, check: HolderCheck): void {
  checks.set(kind, check);
}

export function holderCheck(kind: string): HolderCheck | undefined {
  return checks.get(kind);
}
