/**
 * Customer command handlers: the pure decider run through the one command
 * runner (src/commands/shared/handler.ts), wrapped in the ICE reservation
 * `customerice-<org>-<ice>` when the ICE changes (docs/architecture.md "Invariants across streams"):
 * claim the new value, write the customer stream, release the old value.
 * A refused or failed write gives back what it claimed, so it leaves no
 * reservation behind; what a crash leaves, recovery frees (holders.ts).
 *
 * Streams are `customer-<id>`, global ids: the tenant is the organization_id
 * of the stream's first event, checked before anything else, so another
 * organization's id is NOT_FOUND and never reaches the decider.
 *
 * Each handler returns the runner's result: the customer as decided and the
 * log position to wait for before answering from the read model.
 */
import type { EventMetadata, EventStore } from '../../eventstore/types.ts';
import { envelope } from '../command.ts';
import { checkedWithClaims, customerIceScope, heldBy, iceAlreadyUsed, writeWithReservations, type ReservedValue } from '../reservation/index.ts';
import { wellFormedIce } from '../field-rules.ts';
import { checkIfMatch, loadOwnedStream, loadStream, ownedBy, runCommand, type LoadedStream, type RunResult } from '../shared/handler.ts';
import type { CreateCustomerInput, CustomerCommand, CustomerPatch } from './commands.ts';
import { customerDecider, iceChange, initialCustomerState, type CustomerState } from './decider.ts';
import { customerHolderChecks } from './holders.ts';
import { customerStream, type CustomerEvent } from './events.ts';
import { validateNewCustomer } from './validate.ts';

export interface CustomerWrite {
  store: EventStore;
  organizationId: string;
  /** Metadata of the request; its organization_id is set to organizationId. */
  metadata: EventMetadata;
  /** If-Match: the customer version the client read. */
  ifMatch?: number;
  /** The request's command id under an Idempotency-Key (RunOptions.commandId). */
  commandId?: string;
}

export type CustomerResult = RunResult<CustomerEvent, CustomerState>;

/** The customer's stream, or NOT_FOUND when it does not exist in this organization. */
export function loadCustomer(store: EventStore, organizationId: string, customerId: string): Promise<LoadedStream<CustomerState>> {
  return loadOwnedStream(store, customerStream(customerId), customerDecider, organizationId, 'Customer');
}

export function iceClaims(organizationId: string, ice: string | null) {
  return ice ? [{ scope: customerIceScope(organizationId), value: ice, taken: iceAlreadyUsed }] : [];
}

/** The command on the stream the caller loaded (`known`: its first attempt reads nothing again). */
function run(w: CustomerWrite, metadata: EventMetadata, command: CustomerCommand, known: LoadedStream<CustomerState>, mustExist = true): Promise<CustomerResult> {
  return runCommand(w.store, customerStream(command.data.customer_id), customerDecider, command, {
    metadata,
    ifMatch: w.ifMatch,
    commandId: w.commandId,
    known,
    guard: ownedBy(w.organizationId, 'Customer', mustExist),
    what: 'customer',
  });
}

/** POST /customers. `customerId` is a fresh UUID v7 chosen by the caller. */
export async function createCustomer(w: CustomerWrite, customerId: string, input: CreateCustomerInput): Promise<CustomerResult> {
  const { metadata, commandMetadata } = envelope(w.metadata, w.organizationId);
  // A bad body must not hold an ICE, even for a moment; a taken ICE is listed among its problems.
  await checkedWithClaims(w.store, customerId, () => iceClaims(w.organizationId, wellFormedIce(input.ice)), () => validateNewCustomer(input));
  // Created by an earlier attempt of this request (the id derives from its Idempotency-Key):
  // answer it, whatever became of its ICE since, and claim nothing.
  const known = await loadStream(w.store, customerStream(customerId), customerDecider);
  ownedBy(w.organizationId, 'Customer', false)(known);
  if (known.recorded.length > 0) return { events: [], state: known.state, revision: known.revision, position: known.position, earlier: known.recorded };
  const command: CustomerCommand = { type: 'CreateCustomer', data: { ...input, customer_id: customerId }, metadata: commandMetadata };
  const { claim } = iceChange(command, initialCustomerState);
  return writeWithReservations(
    w.store,
    { owner: customerId, metadata, claims: iceClaims(w.organizationId, claim), releases: [], holds: heldBy(customerHolderChecks, w.store, customerId) },
    // A new stream: the runner appends with no_stream (a taken id would be a conflict, not an overwrite).
    () => run({ ...w, ifMatch: undefined }, metadata, command, known, false),
  );
}

/** The ICE values an update actually gave up, read from the events it appended. */
function releasedIces(organizationId: string, result: CustomerResult): ReservedValue[] {
  return result.events.flatMap((e) =>
    e.type === 'CustomerUpdated' && e.data.previous_ice && e.data.previous_ice !== e.data.customer.ice
      ? [{ scope: customerIceScope(organizationId), value: e.data.previous_ice }]
      : [],
  );
}

/** PATCH /customers/{id}: only the fields sent; an ICE change moves the reservation. */
export async function updateCustomer(w: CustomerWrite, customerId: string, patch: CustomerPatch): Promise<CustomerResult> {
  const { metadata, commandMetadata } = envelope(w.metadata, w.organizationId);
  const command: CustomerCommand = { type: 'UpdateCustomer', data: { customer_id: customerId, patch }, metadata: commandMetadata };
  // Decide once on the current state first: a refused command (bad field,
  // stale If-Match) or one that changes nothing must not touch a reservation.
  const loaded = await loadCustomer(w.store, w.organizationId, customerId);
  const { state, revision } = loaded;
  checkIfMatch(w.ifMatch, revision, 'customer');
  const decided = await checkedWithClaims(w.store, customerId, () => iceClaims(w.organizationId, wellFormedIce(patch.ice)), () => customerDecider.decide(command, state));
  if (decided.length === 0) return { events: [], state, revision, position: null, earlier: loaded.recorded };
  const { claim, release } = iceChange(command, state);
  return writeWithReservations(
    w.store,
    {
      owner: customerId,
      metadata,
      claims: iceClaims(w.organizationId, claim),
      releases: release ? [{ scope: customerIceScope(w.organizationId), value: release }] : [],
      releasedBy: (result) => releasedIces(w.organizationId, result),
      holds: heldBy(customerHolderChecks, w.store, customerId),
    },
    () => run(w, metadata, command, loaded),
  );
}

/** DELETE /customers/{id}: archive (ALREADY_ARCHIVED when it is). The ICE stays reserved. */
export async function archiveCustomer(w: CustomerWrite, customerId: string): Promise<CustomerResult> {
  const { metadata, commandMetadata } = envelope(w.metadata, w.organizationId);
  const loaded = await loadCustomer(w.store, w.organizationId, customerId);
  checkIfMatch(w.ifMatch, loaded.revision, 'customer');
  return run(w, metadata, { type: 'ArchiveCustomer', data: { customer_id: customerId }, metadata: commandMetadata }, loaded);
}
