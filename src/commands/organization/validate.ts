/**
 * Domain rules of organization profile fields (docs/api-decisions.md "Representations"; limits in
 * docs/organizations.md). Readers return normalized values: text trimmed,
 * blank optional text as null, the address with its default country.
 */
import { FieldErrors, readAddress, readEmail, readIce, readText } from '../field-rules.ts';
import type { NewOrganizationInput, OrganizationPatch } from './commands.ts';
import type { OrganizationProfile } from './events.ts';

export const ORGANIZATION_LIMITS = {
  legal_name: 200,
  rc: 50,
  if_number: 50,
  vat_number: 50,
  phone: 50,
  email: 254,
  website: 500,
  street: 500,
  city: 100,
  postal_code: 20,
} as const;

/** An absolute http(s) URL: it is printed on invoices and must be clickable. */
function readWebsite(errors: FieldErrors, value: unknown): string | null | undefined {
  const website = readText(errors, 'website', value, { max: ORGANIZATION_LIMITS.website });
  if (typeof website !== 'string') return website;
  let url: URL | null = null;
  try {
    url = new URL(website);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname.includes('.')) {
    errors.add('website', 'must be a URL starting with http:// or https://');
    return undefined;
  }
  return website;
}

type Reader = (errors: FieldErrors, value: unknown) => unknown;

/** One reader per profile field; legal_name can never be empty (invoices print it). */
const READERS: Record<keyof OrganizationProfile, Reader> = {
  legal_name: (e, v) => readText(e, 'legal_name', v, { required: true, max: ORGANIZATION_LIMITS.legal_name }),
  ice: readIce,
  rc: (e, v) => readText(e, 'rc', v, { max: ORGANIZATION_LIMITS.rc }),
  if_number: (e, v) => readText(e, 'if_number', v, { max: ORGANIZATION_LIMITS.if_number }),
  vat_number: (e, v) => readText(e, 'vat_number', v, { max: ORGANIZATION_LIMITS.vat_number }),
  phone: (e, v) => readText(e, 'phone', v, { max: ORGANIZATION_LIMITS.phone }),
  email: (e, v) => readEmail(e, v, ORGANIZATION_LIMITS.email),
  website: readWebsite,
  billing_address: (e, v) => readAddress(e, 'billing_address', v, ORGANIZATION_LIMITS),
};

export const PROFILE_FIELDS = Object.keys(READERS) as (keyof OrganizationProfile)[];

/** A new organization's whole profile; every problem is reported at once. */
export function validateNewOrganization(input: NewOrganizationInput): OrganizationProfile {
  const errors = new FieldErrors();
  const profile = {} as Record<string, unknown>;
  for (const field of PROFILE_FIELDS) profile[field] = READERS[field](errors, input[field]) ?? null;
  errors.throwIfAny();
  return profile as unknown as OrganizationProfile;
}

/** Only the keys present are read; null clears an optional field. */
export function validateOrganizationPatch(patch: OrganizationPatch): Partial<OrganizationProfile> {
  const errors = new FieldErrors();
  const out = {} as Record<string, unknown>;
  for (const field of PROFILE_FIELDS) {
    if (!Object.prototype.hasOwnProperty.call(patch, field) || patch[field] === undefined) continue;
    out[field] = READERS[field](errors, patch[field]) ?? null;
  }
  errors.throwIfAny();
  return out as Partial<OrganizationProfile>;
}
