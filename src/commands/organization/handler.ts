/**
 * Organization command handlers: the decider run through the one command
 * runner (src/commands/shared/handler.ts), wrapped in the reservations it
 * needs (docs/organizations.md):
 *   - the ICE `orgice-<ice>`, platform wide, claimed first: a request whose
 *     ICE is taken fails before it holds anything else;
 *   - an entity slot `orgslot-<account>-<n>` (n in 1..cap) for the plan's
 *     entity cap, so two concurrent creations can never both take the last
 *     one. Only a request that holds its ICE takes a slot, so requests about
 *     to fail on a duplicate ICE never make others see the cap reached.
 * Every handler returns the runner's result: the position to wait for (read
 * your writes) and the organization as decided.
 */
import type { EventMetadata, EventStore } from '../../eventstore/types.ts';
import { DomainError, notFound } from '../../shared/errors.ts';
import { envelope } from '../command.ts';
import {
  claim,
  claimFirstFree,
  heldBy,
  readReservation,
  iceAlreadyUsed,
  ORGANIZATION_ICE,
  ReservationTakenError,
  organizationSlotScope,
  release,
  checkedWithClaims,
  writeWithReservations,
} from '../reservation/index.ts';
import { checkIfMatch, loadStream, runCommand, type RunResult } from '../shared/handler.ts';
import type { NewOrganizationInput, OrganizationCommand, OrganizationPatch } from './commands.ts';
import { iceChange, organizationDecider, type OrganizationState } from './decider.ts';
import { organizationStream, type OrganizationEvent } from './events.ts';
import { organizationHolderChecks, organizationState } from './holders.ts';
import { validateNewOrganization } from './validate.ts';
import { wellFormedIce } from '../field-rules.ts';

export interface OrganizationWrite {
  store: EventStore;
  /** Metadata of the request (its organization_id is replaced by the organization's id). */
  metadata: EventMetadata;
  /** If-Match: the organization version the client read. */
  ifMatch?: number;
  /** The request's command id under an Idempotency-Key (ExecuteOptions.commandId). */
  commandId?: string;
}

export type OrganizationResult = RunResult<OrganizationEvent, OrganizationState>;

function run(w: OrganizationWrite, metadata: EventMetadata, command: OrganizationCommand): Promise<OrganizationResult> {
  return runCommand(w.store, organizationStream(command.data.organization_id), organizationDecider, command, {
    metadata,
    ifMatch: w.ifMatch,
    commandId: w.commandId,
    what: 'organization',
  });
}

/** The platform-wide claim of an ICE (none without one). */
export function iceClaims(ice: string | null, taken = iceAlreadyUsed) {
  return ice ? [{ scope: ORGANIZATION_ICE, value: ice, taken }] : [];
}

function entityCapReached(cap: number): DomainError {
  return new DomainError('ENTITY_CAP_REACHED', `Your plan allows ${cap} organizations. Upgrade the plan to add more.`, { limit: cap });
}

export interface Provisioning {
  organization_id: string;
  account_id: string;
  /** The plan's entity cap (docs/api-decisions.md, plans). */
  entity_cap: number;
  profile: NewOrganizationInput;
}

/**
 * The claims a refused creation body is judged on (its taken ICE beside its other problems): its well-formed ICE,
 * unless the account has no free entity slot. The cap comes before the ICE, so an account at its cap never
 * learns of an ICE it could not use.
 */
export async function provisioningClaims(store: EventStore, accountId: string, entityCap: number, ice: unknown) {
  const claims = iceClaims(wellFormedIce(ice));
  return claims.length > 0 && (await anySlotFree(store, organizationSlotScope(accountId), entityCap)) ? claims : [];
}

export async function provisionOrganization(w: OrganizationWrite, p: Provisioning): Promise<OrganizationResult> {
  const { metadata, commandMetadata } = envelope(w.metadata, p.organization_id);
  // A bad body must not take a slot or an ICE, even for a moment. A taken ICE is listed among its problems unless
  // the plan's cap refuses the creation anyway: the cap comes before the ICE (below), so an account without a
  // free slot never learns of an ICE it could not use.
  const claimsOfBody = () => provisioningClaims(w.store, p.account_id, p.entity_cap, p.profile.ice);
  await checkedWithClaims(w.store, p.organization_id, claimsOfBody, () => validateNewOrganization(p.profile));
  // Already provisioned by an earlier attempt of this request: answer it, taking no second slot
  // (and, on a failure, releasing none of its own).
  const existing = await loadStream(w.store, organizationStream(p.organization_id), organizationDecider);
  if (existing.recorded.length > 0) {
    if (existing.state.organization?.account_id !== p.account_id) throw notFound('Organization');
    return { events: [], state: existing.state, revision: existing.revision, position: existing.position, earlier: existing.recorded };
  }
  const slots = organizationSlotScope(p.account_id);
  const commandFor = (slot: number): OrganizationCommand => ({
    type: 'ProvisionOrganization',
    data: { ...p.profile, organization_id: p.organization_id, account_id: p.account_id, entity_slot: slot },
    metadata: commandMetadata,
  });
  const { claim } = iceChange(commandFor(0), organizationDecider.initialState);
  const iceTaken = iceAlreadyUsed();
  try {
    return await writeWithReservations(
      w.store,
      { owner: p.organization_id, metadata, claims: iceClaims(claim, () => iceTaken), releases: [], holds: heldBy(organizationHolderChecks, w.store, p.organization_id) },
      async () => {
        const slot = await claimFirstFree(w.store, slots, p.entity_cap, p.organization_id, metadata);
        if (slot === null) throw entityCapReached(p.entity_cap);
        try {
          // If-Match names a version of an existing organization: a create has none to compare (as for customers).
          return await run({ ...w, ifMatch: undefined }, metadata, commandFor(slot));
        } catch (err) {
          await release(w.store, slots, String(slot), p.organization_id, metadata).catch(() => false);
          throw err;
        }
      },
    );
  } catch (err) {
    // The plan's cap comes before the ICE: an account with no free slot hears that, as it would have without the ICE.
    if (err === iceTaken && !(await anySlotFree(w.store, slots, p.entity_cap))) throw entityCapReached(p.entity_cap);
    throw err;
  }
}

/** Whether some entity slot of the account is free (read only; the refusal path of a duplicate ICE). */
async function anySlotFree(store: EventStore, slots: ReturnType<typeof organizationSlotScope>, cap: number): Promise<boolean> {
  for (let slot = 1; slot <= cap; slot++) {
    if ((await readReservation(store, slots, String(slot))).owner === null) return true;
  }
  return false;
}

export async function updateOrganizationProfile(w: OrganizationWrite, organizationId: string, patch: OrganizationPatch): Promise<OrganizationResult> {
  const { metadata, commandMetadata } = envelope(w.metadata, organizationId);
  const command: OrganizationCommand = { type: 'UpdateOrganizationProfile', data: { organization_id: organizationId, patch }, metadata: commandMetadata };
  // Decide once on the current state first: a refused command (bad field,
  // archived, stale If-Match) must not touch any reservation.
  const { state, revision } = await loadStream(w.store, organizationStream(organizationId), organizationDecider);
  checkIfMatch(w.ifMatch, revision);
  await checkedWithClaims(w.store, organizationId, () => iceClaims(wellFormedIce(patch.ice)), () => organizationDecider.decide(command, state));
  // The ICE it replaces or clears stays reserved to it: an ICE is never reused (iceChange).
  const { claim } = iceChange(command, state);
  return writeWithReservations(
    w.store,
    { owner: organizationId, metadata, claims: iceClaims(claim), releases: [], holds: heldBy(organizationHolderChecks, w.store, organizationId) },
    () => run(w, metadata, command),
  );
}

export function archiveOrganization(w: OrganizationWrite, organizationId: string): Promise<OrganizationResult> {
  const { metadata, commandMetadata } = envelope(w.metadata, organizationId);
  return run(w, metadata, { type: 'ArchiveOrganization', data: { organization_id: organizationId }, metadata: commandMetadata });
}

export function restoreOrganization(w: OrganizationWrite, organizationId: string): Promise<OrganizationResult> {
  const { metadata, commandMetadata } = envelope(w.metadata, organizationId);
  return run(w, metadata, { type: 'RestoreOrganization', data: { organization_id: organizationId }, metadata: commandMetadata });
}

export function changeOrganizationApiAccess(w: OrganizationWrite, organizationId: string, enabled: boolean): Promise<OrganizationResult> {
  const { metadata, commandMetadata } = envelope(w.metadata, organizationId);
  const command: OrganizationCommand = {
    type: 'ChangeOrganizationApiAccess',
    data: { organization_id: organizationId, api_enabled: enabled },
    metadata: commandMetadata,
  };
  return run(w, metadata, command);
}

export type FormerIceRelease =
  | { outcome: 'released'; owner: string }
  | { outcome: 'not_reserved' }
  | { outcome: 'in_use'; owner: string; archived: boolean }
  /** The organization took the ICE back as it was freed, and another took it in between: both name it. */
  | { outcome: 'taken_meanwhile'; owner: string; holder: string };

/**
 * Operator only (`npm run admin -- org release-ice`): frees an ICE that its
 * organization named once and names no more, typically one entered by
 * mistake, so the legal entity it identifies can use it. An ICE an
 * organization names now is never freed. Should that organization take the
 * ICE back as it is freed, it is claimed for it again; a PATCH whose claim
 * found the ICE still held and whose write lands after both reads is not
 * seen (a known limit, docs/organizations.md: run it for an ICE nobody is
 * taking back).
 */
export async function releaseFormerIce(store: EventStore, ice: string, metadata: EventMetadata): Promise<FormerIceRelease> {
  const { owner } = await readReservation(store, ORGANIZATION_ICE, ice);
  if (owner === null) return { outcome: 'not_reserved' };
  const current = async () => (await organizationState(store, owner)).organization;
  const before = await current();
  if (before?.ice === ice) return { outcome: 'in_use', owner, archived: before.archived };
  await release(store, ORGANIZATION_ICE, ice, owner, metadata);
  const after = await current();
  if (after?.ice !== ice) return { outcome: 'released', owner };
  try {
    await claim(store, ORGANIZATION_ICE, ice, owner, metadata);
    return { outcome: 'in_use', owner, archived: after.archived };
  } catch (err) {
    if (!(err instanceof ReservationTakenError)) throw err;
    return { outcome: 'taken_meanwhile', owner, holder: err.owner };
  }
}
