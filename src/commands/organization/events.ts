/**
 * Organization events (stream `organization-<id>`). Like the customer events,
 * each carries the whole organization as of that event under
 * data.organization, so the projector upserts it without reading anything
 * else and a rebuild gives the same rows.
 * Subscription and API quotas are not here: they belong to the account and
 * its keys (configuration tables), and are joined at read time.
 */
import type { DomainEvent } from '../shared/decider.ts';

export interface BillingAddress {
  street: string | null;
  city: string | null;
  postal_code: string | null;
  /** ISO 3166-1 alpha-2, default 'MA'. */
  country: string;
}

/** What a client writes (PATCH /organization, POST /organizations). */
export interface OrganizationProfile {
  legal_name: string;
  /** 15 digits, unique on the whole platform (reservation stream orgice-<ice>). */
  ice: string | null;
  rc: string | null;
  if_number: string | null;
  vat_number: string | null;
  phone: string | null;
  email: string | null;
  website: string | null;
  billing_address: BillingAddress;
}

export interface Organization extends OrganizationProfile {
  id: string;
  account_id: string;
  /** `org update --api disabled` switches it off: API_DISABLED (docs/api-decisions.md "Keys, plans and quotas"). */
  api_enabled: boolean;
  archived: boolean;
  archived_at: string | null;
  created_at: string;
  updated_at: string;
  /** Revision of this event in the organization stream (provisioned = 0); sent as the ETag. */
  version: number;
}

export type OrganizationProvisioned = DomainEvent<
  'OrganizationProvisioned',
  {
    organization: Organization;
    /** The account's entity slot it occupies (reservation orgslot-<account>-<n>). */
    entity_slot: number;
  }
>;

export type OrganizationProfileUpdated = DomainEvent<
  'OrganizationProfileUpdated',
  {
    organization: Organization;
    /** Profile fields whose value changed, e.g. ['legal_name', 'ice']. */
    changed_fields: string[];
    /** ICE before this update (equals organization.ice when unchanged): the reservation to release. */
    previous_ice: string | null;
  }
>;

export type OrganizationArchived = DomainEvent<'OrganizationArchived', { organization: Organization }>;
export type OrganizationRestored = DomainEvent<'OrganizationRestored', { organization: Organization }>;
export type OrganizationApiAccessChanged = DomainEvent<'OrganizationApiAccessChanged', { organization: Organization }>;

export type OrganizationEvent =
  | OrganizationProvisioned
  | OrganizationProfileUpdated
  | OrganizationArchived
  | OrganizationRestored
  | OrganizationApiAccessChanged;

export const ORGANIZATION_EVENT_TYPES = [
  'OrganizationProvisioned',
  'OrganizationProfileUpdated',
  'OrganizationArchived',
  'OrganizationRestored',
  'OrganizationApiAccessChanged',
] as const satisfies readonly OrganizationEvent['type'][];

export function organizationStream(organizationId: string): string {
  return `organization-${organizationId}`;
}
