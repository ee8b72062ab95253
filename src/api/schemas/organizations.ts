/**
 * JSON schemas of the organization endpoints (validation and OpenAPI).
 * They fix the shape: types, and no unknown field (the pipeline closes every
 * object). Limits and formats (15-digit ICE, URL, lengths) are the decider's
 * domain rules, so every client, the CLI included, gets the same messages.
 */
import type { JsonSchema } from '../route.ts';
import { named, representation } from '../openapi-named.ts';
import { pagingQuery } from './paging.ts';

const text = (description: string): JsonSchema => ({ type: ['string', 'null'], description });

const PROFILE: Record<string, JsonSchema> = {
  legal_name: { type: 'string', description: 'Registered name, printed on invoices (1..200 characters).' },
  ice: text('Identifiant Commun de l\'Entreprise: 15 digits, unique on the whole platform and never reused: an ICE the organization replaces or clears stays reserved to it.'),
  rc: text('Registre de commerce number.'),
  if_number: text('Identifiant fiscal.'),
  vat_number: text('VAT number.'),
  phone: text('Phone number.'),
  email: { type: ['string', 'null'], description: 'Contact email address.', example: 'compta@atlas.ma' },
  website: text('An http:// or https:// URL.'),
};

const ADDRESS: JsonSchema = {
  type: 'object',
  properties: {
    street: text('Street and number.'),
    city: text('City.'),
    postal_code: text('Postal code.'),
    country: text('ISO 3166-1 alpha-2 code, default MA.'),
  },
};

/** PATCH /organization: any subset; null clears an optional field; billing_address replaces the whole address. */
export const organizationPatchBody: JsonSchema = named('UpdateOrganizationRequest', {
  type: 'object',
  properties: { ...PROFILE, billing_address: { ...ADDRESS, type: ['object', 'null'] } },
});

/** POST /organizations: the reference's flat address fields, stored as billing_address. */
export const organizationCreateBody: JsonSchema = named('CreateOrganizationRequest', {
  type: 'object',
  required: ['legal_name'],
  properties: {
    ...PROFILE,
    address_street: text('Stored as billing_address.street.'),
    address_city: text('Stored as billing_address.city.'),
    address_postal_code: text('Stored as billing_address.postal_code.'),
    address_country: text('Stored as billing_address.country (default MA).'),
  },
});

export const organizationListQuery: JsonSchema = {
  type: 'object',
  properties: {
    ...pagingQuery,
    order: { type: 'string', enum: ['asc', 'desc'], default: 'desc', description: 'By creation time.' },
    include_archived: { type: 'boolean', default: false, description: 'Include archived organizations.' },
  },
};

const nullable = (type: string) => ({ type: [type, 'null'] });

export const billingAddressSchema: JsonSchema = named('BillingAddress', representation({
  street: nullable('string'),
  city: nullable('string'),
  postal_code: nullable('string'),
  country: { ...nullable('string'), description: 'ISO 3166-1 alpha-2 code, default MA.' },
}));

export const organizationResponse: JsonSchema = named('Organization', representation({
  id: { type: 'string', format: 'uuid' },
  legal_name: { type: 'string' },
  ice: nullable('string'), rc: nullable('string'), if_number: nullable('string'), vat_number: nullable('string'),
  phone: nullable('string'), email: nullable('string'), website: nullable('string'),
  billing_address: billingAddressSchema,
  subscription: named('Subscription', representation({
    plan: { type: 'string', enum: ['starter', 'professional', 'fiduciaire'] },
    status: { type: 'string', enum: ['active', 'expired'] },
    current_period_end: { ...nullable('string'), format: 'date' },
  })),
  api_quotas: named('ApiQuotas', representation({
    requests_per_minute: { type: 'integer' },
    api_keys_limit: nullable('integer'),
    api_keys_used: { type: 'integer' },
    recurring_schedules_limit: nullable('integer'),
    recurring_schedules_used: { type: 'integer' },
  }, { description: 'A null limit is unlimited.' })),
  archived: { type: 'boolean' },
  archived_at: { ...nullable('string'), format: 'date-time' },
  created_at: { type: 'string', format: 'date-time' },
  updated_at: { type: 'string', format: 'date-time' },
}));
