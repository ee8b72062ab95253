/**
 * Organization decider (reference: States, Organization; docs/api-decisions.md "Representations").
 * Archive and restore toggle one flag, each refused when it would change
 * nothing (ALREADY_ARCHIVED, NOT_ARCHIVED). An archived organization is
 * frozen: its profile cannot change until it is restored. ICE uniqueness and
 * the entity cap are not decided here: the handler claims reservations around
 * the append (docs/architecture.md "Invariants across streams"), using iceChange() to know which.
 * An ICE is never given back: it names one legal entity, so every ICE an
 * organization has named stays its own (`ices`; docs/organizations.md "Unique ICE").
 */
import { DomainError, notFound } from '../../shared/errors.ts';
import type { Decider } from '../shared/decider.ts';
import { sameJson } from '../shared/same-json.ts';
import type { OrganizationCommand } from './commands.ts';
import type { Organization, OrganizationEvent } from './events.ts';
import { PROFILE_FIELDS, validateNewOrganization, validateOrganizationPatch } from './validate.ts';

export interface OrganizationState {
  /** Revision of the last event folded (-1: no stream yet). */
  revision: number;
  organization: Organization | null;
  /** The entity slot it occupies in its account (0 before provisioning). */
  entitySlot: number;
  /** Every ICE it has named, oldest first: each stays reserved to it (recovery's holder check reads them). */
  ices: readonly string[];
}

export const initialOrganizationState: OrganizationState = { revision: -1, organization: null, entitySlot: 0, ices: [] };

export function evolveOrganization(state: OrganizationState, event: OrganizationEvent): OrganizationState {
  const entitySlot = event.type === 'OrganizationProvisioned' ? event.data.entity_slot : state.entitySlot;
  const ice = event.data.organization.ice;
  const ices = ice && !state.ices.includes(ice) ? [...state.ices, ice] : state.ices;
  return { revision: state.revision + 1, organization: event.data.organization, entitySlot, ices };
}

/** The refusal the pipeline also gives an archived organization's keys (docs/api-decisions.md "Keys, plans and quotas"). */
export function organizationArchivedError(): DomainError {
  return new DomainError('FORBIDDEN', 'The organization is archived. Restore it to use it again.', {
    reason: 'organization_archived',
  });
}

function decideOrganization(command: OrganizationCommand, state: OrganizationState): OrganizationEvent[] {
  const now = command.metadata.now;
  const version = state.revision + 1;

  if (command.type === 'ProvisionOrganization') {
    // Same id twice (a retried command): nothing new happens, the caller answers with what exists.
    if (state.organization) return [];
    const { organization_id, account_id, entity_slot, ...input } = command.data;
    const organization: Organization = {
      id: organization_id,
      account_id,
      ...validateNewOrganization(input),
      api_enabled: true,
      archived: false,
      archived_at: null,
      created_at: now,
      updated_at: now,
      version,
    };
    return [{ type: 'OrganizationProvisioned', data: { organization, entity_slot } }];
  }

  const current = state.organization;
  if (!current) throw notFound('Organization');
  const stamp = (changes: Partial<Organization>): Organization => ({ ...current, ...changes, updated_at: now, version });

  switch (command.type) {
    case 'ArchiveOrganization':
      if (current.archived) throw new DomainError('ALREADY_ARCHIVED', 'The organization is already archived.');
      return [{ type: 'OrganizationArchived', data: { organization: stamp({ archived: true, archived_at: now }) } }];
    case 'RestoreOrganization':
      if (!current.archived) throw new DomainError('NOT_ARCHIVED', 'The organization is not archived.');
      return [{ type: 'OrganizationRestored', data: { organization: stamp({ archived: false, archived_at: null }) } }];
    case 'ChangeOrganizationApiAccess':
      // An operator switch, allowed in any state; setting the current value appends nothing.
      if (current.api_enabled === command.data.api_enabled) return [];
      return [{ type: 'OrganizationApiAccessChanged', data: { organization: stamp({ api_enabled: command.data.api_enabled }) } }];
    case 'UpdateOrganizationProfile': {
      if (current.archived) throw organizationArchivedError();
      const next: Organization = { ...current, ...validateOrganizationPatch(command.data.patch) };
      const changed_fields = PROFILE_FIELDS.filter((f) => !sameJson(current[f], next[f]));
      // A PATCH that changes nothing appends nothing: same version, no event.
      if (changed_fields.length === 0) return [];
      const organization = { ...next, updated_at: now, version };
      return [{ type: 'OrganizationProfileUpdated', data: { organization, changed_fields, previous_ice: current.ice } }];
    }
  }
}

export const organizationDecider: Decider<OrganizationCommand, OrganizationEvent, OrganizationState> = {
  initialState: initialOrganizationState,
  evolve: evolveOrganization,
  decide: decideOrganization,
};

/**
 * The ICE a command would claim, for the handler to reserve before the
 * append; nothing is ever given up. Validates the ICE first so a malformed
 * value never creates a reservation stream. An ICE the organization named
 * before is still its own (claiming it again appends nothing), and one it
 * replaces, clears or keeps while archived stays reserved to it: "the ICE
 * identifies exactly one legal entity on the whole platform and cannot be
 * reused, even by another account" (the API reference).
 */
export function iceChange(command: OrganizationCommand, state: OrganizationState): { claim: string | null } {
  if (command.type === 'ProvisionOrganization') {
    if (state.organization) return { claim: null };
    return { claim: validateOrganizationPatch({ ice: command.data.ice }).ice ?? null };
  }
  if (command.type !== 'UpdateOrganizationProfile' || !state.organization || command.data.patch.ice === undefined) {
    return { claim: null };
  }
  const after = validateOrganizationPatch({ ice: command.data.patch.ice }).ice ?? null;
  return { claim: after === state.organization.ice ? null : after };
}

