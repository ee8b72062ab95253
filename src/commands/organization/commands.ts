/**
 * Organization commands. The API schemas shape the inputs, but the decider
 * re-checks every value, so a command built by the CLI, the demo bootstrap
 * or a test is held to the same rules.
 */
import type { Command } from '../command.ts';

export interface BillingAddressInput {
  street?: string | null;
  city?: string | null;
  postal_code?: string | null;
  country?: string | null;
}

/** A new organization's profile: legal_name required, the rest optional. */
export interface NewOrganizationInput {
  legal_name: string;
  ice?: string | null;
  rc?: string | null;
  if_number?: string | null;
  vat_number?: string | null;
  phone?: string | null;
  email?: string | null;
  website?: string | null;
  billing_address?: BillingAddressInput | null;
}

/** PATCH /organization body: only the fields sent; null clears an optional field. */
export type OrganizationPatch = Partial<NewOrganizationInput>;

export type ProvisionOrganization = Command<
  'ProvisionOrganization',
  NewOrganizationInput & { organization_id: string; account_id: string; entity_slot: number }
>;
export type UpdateOrganizationProfile = Command<'UpdateOrganizationProfile', { organization_id: string; patch: OrganizationPatch }>;
export type ArchiveOrganization = Command<'ArchiveOrganization', { organization_id: string }>;
export type RestoreOrganization = Command<'RestoreOrganization', { organization_id: string }>;
/** Operator switch (`org update ID --api enabled|disabled`). */
export type ChangeOrganizationApiAccess = Command<'ChangeOrganizationApiAccess', { organization_id: string; api_enabled: boolean }>;

export type OrganizationCommand =
  | ProvisionOrganization
  | UpdateOrganizationProfile
  | ArchiveOrganization
  | RestoreOrganization
  | ChangeOrganizationApiAccess;
