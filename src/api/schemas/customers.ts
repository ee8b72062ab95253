/**
 * JSON schemas of the customer endpoints: ajv validates requests with them
 * and OpenAPI shows them (src/api/openapi.ts). Every object is closed
 * (additionalProperties: false, added by the pipeline), so a misspelt field
 * is a VALIDATION_ERROR, never silently dropped.
 *
 * Shapes and hard limits live here; the decider (src/commands/customer/
 * validate.ts) re-checks the domain rules with its own messages (email shape,
 * country code, blank names), so both layers agree on the limits below.
 */
import { CUSTOMER_STATUSES, CUSTOMER_TYPES } from '../../commands/customer/events.ts';
import { CUSTOMER_LIMITS } from '../../commands/customer/validate.ts';
import type { JsonSchema } from '../route.ts';
import { named, representation } from '../openapi-named.ts';
import { pagingQuery } from './paging.ts';

const text = (max: number, description?: string): JsonSchema => ({
  type: ['string', 'null'],
  maxLength: max,
  ...(description ? { description } : {}),
});

const ice: JsonSchema = {
  type: ['string', 'null'],
  pattern: '^[0-9]{15}$',
  description: 'Identifiant Commun de l\'Entreprise: exactly 15 digits. Unique within the organization (a duplicate answers VALIDATION_ERROR, field ice, "already used").',
  example: '001234567000089',
};

const address: JsonSchema = named('AddressInput', {
  type: ['object', 'null'],
  description: 'Sent as one object; on update it replaces the whole address.',
  properties: {
    street: text(CUSTOMER_LIMITS.street),
    city: text(CUSTOMER_LIMITS.city),
    postal_code: text(CUSTOMER_LIMITS.postal_code),
    country: text(2, 'ISO 3166-1 alpha-2 code, default MA.'),
  },
});

const tags: JsonSchema = {
  type: ['array', 'null'],
  maxItems: CUSTOMER_LIMITS.tags,
  items: { type: 'string', minLength: 1, maxLength: CUSTOMER_LIMITS.tag },
  description: 'Duplicates are dropped, order is kept; on update the list replaces the old one.',
};

const name: JsonSchema = { type: 'string', minLength: 1, maxLength: CUSTOMER_LIMITS.name };
const type: JsonSchema = { type: 'string', enum: [...CUSTOMER_TYPES] };

/** Fields both create and update accept. */
const common = {
  name,
  type,
  ice,
  email: text(CUSTOMER_LIMITS.email),
  phone: text(CUSTOMER_LIMITS.phone),
  address,
  notes: text(CUSTOMER_LIMITS.notes),
  tags,
};

export const createCustomerBody: JsonSchema = named('CreateCustomerRequest', {
  type: 'object',
  required: ['name', 'type'],
  properties: {
    ...common,
    legal_name: text(CUSTOMER_LIMITS.legal_name, 'Create only.'),
    rc: text(CUSTOMER_LIMITS.rc, 'Registre de commerce number. Create only.'),
  },
});

/** Partial: send only what changes; null clears an optional field. legal_name and rc are create-only. */
export const updateCustomerBody: JsonSchema = named('UpdateCustomerRequest', {
  type: 'object',
  properties: {
    ...common,
    status: { type: 'string', enum: [...CUSTOMER_STATUSES], description: 'active unarchives an archived customer.' },
  },
});

export const listCustomersQuery: JsonSchema = {
  type: 'object',
  properties: {
    ...pagingQuery,
    order: { type: 'string', enum: ['asc', 'desc'], default: 'desc', description: 'By created_at, then id.' },
    search: {
      type: 'string',
      maxLength: 200,
      description: 'Case- and accent-insensitive substring of the name, email or ICE ("ecole" finds "École").',
    },
    type,
    status: { type: 'string', enum: [...CUSTOMER_STATUSES] },
  },
};

const nullableString = { type: ['string', 'null'] };
const datetime = { type: 'string', format: 'date-time' };

/** A customer's postal address as the API shows it. */
export const addressSchema: JsonSchema = named('Address', representation({
  street: nullableString,
  city: nullableString,
  postal_code: nullableString,
  country: { type: 'string', description: 'ISO 3166-1 alpha-2 code.', example: 'MA' },
}));

/** The customer representation (docs/api-decisions.md "Representations"), for OpenAPI; also the data of customer.* webhooks. */
export const customerSchema: JsonSchema = named('Customer', representation({
  id: { type: 'string', format: 'uuid' },
  name: { type: 'string' },
  type,
  ice: nullableString,
  legal_name: nullableString,
  rc: nullableString,
  email: nullableString,
  phone: nullableString,
  address: addressSchema,
  notes: nullableString,
  tags: { type: 'array', items: { type: 'string' } },
  status: { type: 'string', enum: [...CUSTOMER_STATUSES] },
  archived_at: { type: ['string', 'null'], format: 'date-time' },
  created_at: datetime,
  updated_at: datetime,
  version: { type: 'integer', description: 'Also sent as the ETag.' },
}));
