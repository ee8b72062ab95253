/**
 * Domain rules of customer fields (limits in docs/domain-rules.md). Each
 * reader returns normalized values: text trimmed, blank optional text as
 * null, address with its default country.
 */
import { FieldErrors, readEnum, readText } from '../field-rules.ts';
import type { AddressInput, CreateCustomerInput, CustomerPatch } from './commands.ts';
import { CUSTOMER_STATUSES, CUSTOMER_TYPES, type Address, type Customer } from './events.ts';

export const CUSTOMER_LIMITS = {
  name: 200,
  legal_name: 200,
  rc: 50,
  email: 254,
  phone: 50,
  street: 500,
  city: 100,
  postal_code: 20,
  notes: 5000,
  tags: 50,
  tag: 50,
} as const;

export const DEFAULT_COUNTRY = 'MA';
const ICE = /^\d{15}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const COUNTRY = /^[A-Z]{2}$/;

/** The fields a client writes; the rest of Customer is lifecycle. */
export type CustomerFields = Pick<
  Customer,
  'name' | 'type' | 'ice' | 'legal_name' | 'rc' | 'email' | 'phone' | 'address' | 'notes' | 'tags'
>;

function readIce(errors: FieldErrors, value: unknown): string | null | undefined {
  const ice = readText(errors, 'ice', value, { max: 100 }); // the digit rule gives the message
  if (typeof ice === 'string' && !ICE.test(ice)) {
    errors.add('ice', 'must be exactly 15 digits');
    return undefined;
  }
  return ice;
}

function readEmail(errors: FieldErrors, value: unknown): string | null | undefined {
  const email = readText(errors, 'email', value, { max: CUSTOMER_LIMITS.email });
  if (typeof email === 'string' && !EMAIL.test(email)) {
    errors.add('email', 'must be a valid email address');
    return undefined;
  }
  return email;
}

function readAddress(errors: FieldErrors, value: unknown): Address {
  const empty: Address = { street: null, city: null, postal_code: null, country: DEFAULT_COUNTRY };
  if (value === undefined || value === null) return empty;
  if (typeof value !== 'object' || Array.isArray(value)) {
    errors.add('address', 'must be an object');
    return empty;
  }
  const input = value as AddressInput;
  const country = readText(errors, 'address.country', input.country, { max: 2 }) ?? DEFAULT_COUNTRY;
  if (!COUNTRY.test(country)) errors.add('address.country', 'must be an ISO 3166-1 alpha-2 code such as MA');
  return {
    street: readText(errors, 'address.street', input.street, { max: CUSTOMER_LIMITS.street }) ?? null,
    city: readText(errors, 'address.city', input.city, { max: CUSTOMER_LIMITS.city }) ?? null,
    postal_code: readText(errors, 'address.postal_code', input.postal_code, { max: CUSTOMER_LIMITS.postal_code }) ?? null,
    country,
  };
}

/** Tags: up to 50 distinct non-blank strings, order kept, duplicates dropped. */
function readTags(errors: FieldErrors, value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    errors.add('tags', 'must be an array of strings');
    return [];
  }
  if (value.length > CUSTOMER_LIMITS.tags) errors.add('tags', `must contain at most ${CUSTOMER_LIMITS.tags} tags`);
  const tags = value.map((tag, i) => readText(errors, `tags[${i}]`, tag, { required: true, max: CUSTOMER_LIMITS.tag }));
  return [...new Set(tags.filter((tag): tag is string => typeof tag === 'string'))];
}

/** CreateCustomer: name and type required, everything else optional. */
export function validateNewCustomer(input: CreateCustomerInput): CustomerFields {
  const errors = new FieldErrors();
  const fields: CustomerFields = {
    name: readText(errors, 'name', input.name, { required: true, max: CUSTOMER_LIMITS.name }) as string,
    type: readEnum(errors, 'type', input.type, CUSTOMER_TYPES) as Customer['type'],
    ice: readIce(errors, input.ice) ?? null,
    legal_name: readText(errors, 'legal_name', input.legal_name, { max: CUSTOMER_LIMITS.legal_name }) ?? null,
    rc: readText(errors, 'rc', input.rc, { max: CUSTOMER_LIMITS.rc }) ?? null,
    email: readEmail(errors, input.email) ?? null,
    phone: readText(errors, 'phone', input.phone, { max: CUSTOMER_LIMITS.phone }) ?? null,
    address: readAddress(errors, input.address),
    notes: readText(errors, 'notes', input.notes, { max: CUSTOMER_LIMITS.notes, keepWhitespace: true }) ?? null,
    tags: readTags(errors, input.tags),
  };
  errors.throwIfAny();
  return fields;
}

export type NormalizedPatch = Partial<Omit<CustomerFields, 'legal_name' | 'rc'> & { status: Customer['status'] }>;

/** UpdateCustomer: only the keys present are read; null clears optional fields. */
export function validateCustomerPatch(patch: CustomerPatch): NormalizedPatch {
  const errors = new FieldErrors();
  const has = (key: keyof CustomerPatch) => Object.prototype.hasOwnProperty.call(patch, key) && patch[key] !== undefined;
  const out: NormalizedPatch = {};
  if (has('name')) out.name = readText(errors, 'name', patch.name, { required: true, max: CUSTOMER_LIMITS.name }) as string;
  if (has('type')) out.type = readEnum(errors, 'type', patch.type, CUSTOMER_TYPES);
  if (has('ice')) out.ice = readIce(errors, patch.ice) ?? null;
  if (has('email')) out.email = readEmail(errors, patch.email) ?? null;
  if (has('phone')) out.phone = readText(errors, 'phone', patch.phone, { max: CUSTOMER_LIMITS.phone }) ?? null;
  if (has('address')) out.address = readAddress(errors, patch.address);
  if (has('notes')) {
    out.notes = readText(errors, 'notes', patch.notes, { max: CUSTOMER_LIMITS.notes, keepWhitespace: true }) ?? null;
  }
  if (has('tags')) out.tags = readTags(errors, patch.tags);
  if (has('status')) out.status = readEnum(errors, 'status', patch.status, CUSTOMER_STATUSES);
  errors.throwIfAny();
  return out;
}
