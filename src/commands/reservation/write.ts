/**
 * The order of a write that changes reserved values (docs/architecture.md "Invariants across streams"):
 *   1. claim every new value (a taken one refuses the whole write);
 *   2. mark every value given up (ReservationReleaseIntended), so a crash
 *      before step 4 leaves a trace recovery follows;
 *   3. write the owner's stream;
 *   4. release the values given up.
 * If step 3 fails, the values claimed in step 1 are released again (only
 * those this write took: a retried write keeps what it held before; and
 * none the owner names by then, `holds`). Releases
 * are best effort: what a crash or an outage leaves behind, recovery
 * (src/workers/reservation-recovery.ts) frees once it sees the owner does not
 * hold the value.
 */
import type { EventMetadata, EventStore } from '../../eventstore/types.ts';
import { DomainError, validationError, type FieldError } from '../../shared/errors.ts';
import type { ReservationScope } from './events.ts';
import { claim, intendRelease, readReservation, release, ReservationTakenError } from './reservation.ts';

export interface ReservedValue {
  scope: ReservationScope;
  value: string;
}

export interface NewReservation extends ReservedValue {
  /** The error a value held by someone else answers (e.g. iceAlreadyUsed). */
  taken(): Error;
}

export interface ReservationPlan<T> {
  owner: string;
  metadata: EventMetadata;
  claims: NewReservation[];
  /** Values the owner gives up with this write, as known before it. */
  releases: ReservedValue[];
  /**
   * The values the write actually gave up (a concurrent writer may have
   * changed the owner in between); default: `releases`.
   */
  releasedBy?(result: T): ReservedValue[];
  /**
   * Whether the owner's stream names `value` now (its kind's holder check). When the write fails, a value this
   * write claimed is released only if not: a concurrent write of the same owner, whose claim found the value
   * already held, may have named it in between, and freeing it then would leave the owner naming a free value.
   */
  holds?(value: ReservedValue): Promise<boolean>;
}

export async function writeWithReservations<T>(store: EventStore, plan: ReservationPlan<T>, write: () => Promise<T>): Promise<T> {
  const { owner, metadata } = plan;
  const taken: ReservedValue[] = [];
  let result: T;
  try {
    for (const wanted of plan.claims) {
      try {
        if ((await claim(store, wanted.scope, wanted.value, owner, metadata)) === 'claimed') taken.push(wanted);
      } catch (err) {
        throw err instanceof ReservationTakenError ? wanted.taken() : err;
      }
    }
    for (const given of plan.releases) await intendRelease(store, given.scope, given.value, owner, metadata);
    result = await write();
  } catch (err) {
    // Undo in reverse, keeping what the owner names by now (holds); a failure here is left to recovery, the
    // caller gets the first error. A holder check that fails keeps the value: recovery checks it later.
    for (const mine of taken.reverse()) {
      if (plan.holds && (await plan.holds(mine).catch(() => true))) continue;
      await release(store, mine.scope, mine.value, owner, metadata).catch(() => false);
    }
    throw err;
  }
  const released = plan.releasedBy ? plan.releasedBy(result) : plan.releases;
  for (const given of released) await release(store, given.scope, given.value, owner, metadata).catch(() => false);
  return result;
}

/**
 * The field errors the claims of a body would add to `known` (its other refusals): a value someone else
 * holds answers its taken() fields, so one answer lists every problem of the body (docs/api-decisions.md
 * "Errors"), a duplicate ICE beside a bad e-mail. It only reads: a refused body claims nothing, even for a
 * moment. A claim whose field is refused already (a malformed ICE) is not read; `owner` (null for a body
 * that creates) holding a value is not a refusal.
 */
export async function takenClaimFields(store: EventStore, owner: string | null, claims: NewReservation[], known: readonly FieldError[]): Promise<FieldError[]> {
  const added: FieldError[] = [];
  for (const wanted of claims) {
    const taken = wanted.taken();
    const fields = taken instanceof DomainError ? ((taken.details as { fields?: FieldError[] } | undefined)?.fields ?? []) : [];
    if (fields.length === 0 || fields.some((f) => [...known, ...added].some((x) => x.field === f.field))) continue;
    const { owner: holder } = await readReservation(store, wanted.scope, wanted.value);
    if (holder !== null && holder !== owner) added.push(...fields);
  }
  return added;
}

/**
 * Runs a command's field rules; when they refuse it (VALIDATION_ERROR), the refusal also lists what its claims
 * would add (takenClaimFields): a duplicate ICE beside a bad e-mail, in one answer. `owner` holding a value
 * (its own ICE) is not a refusal; `claims` is asked only on a refusal.
 */
export async function checkedWithClaims<T>(
  store: EventStore,
  owner: string,
  claims: () => NewReservation[] | Promise<NewReservation[]>,
  rules: () => T,
): Promise<T> {
  try {
    return rules();
  } catch (err) {
    if (!(err instanceof DomainError) || err.code !== 'VALIDATION_ERROR') throw err;
    const fields = (err.details as { fields?: FieldError[] } | undefined)?.fields ?? [];
    const added = await takenClaimFields(store, owner, await claims(), fields);
    throw added.length === 0 ? err : validationError([...fields, ...added], err.message);
  }
}
