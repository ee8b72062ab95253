/**
 * Domain rules of customer fields (limits in docs/domain-rules.md). Each
 * reader returns normalized values: text trimmed, blank optional text as
 * null, address with its default country.
 */
import { FieldErrors, readAddress, readEmail, readEnum, readIce, readText } from '../field-rules.ts';
import type { CreateCustomerInput, CustomerPatch } from './commands.ts';
import { CUSTOMER_STATUSES, CUSTOMER_TYPES, type Customer } from './events.ts';

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

/** The fields a client writes; the rest of Customer is lifecycle. */
export type CustomerFields = Pick<
  Customer,
  'name' | 'type' | 'ice' | 'legal_name' | 'rc' | 'email' | 'phone' | 'address' | 'notes' | 'tags'
>;

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
    email: readEmail(errors, input.email, CUSTOMER_LIMITS.email) ?? null,
    phone: readText(errors, 'phone', input.phone, { max: CUSTOMER_LIMITS.phone }) ?? null,
    address: readAddress(errors, 'address', input.address, CUSTOMER_LIMITS),
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
  if (has('email')) out.email = readEmail(errors, patch.email, CUSTOMER_LIMITS.email) ?? null;
  if (has('phone')) out.phone = readText(errors, 'phone', patch.phone, { max: CUSTOMER_LIMITS.phone }) ?? null;
  if (has('address')) out.address = readAddress(errors, 'address', patch.address, CUSTOMER_LIMITS);
  if (has('notes')) {
    out.notes = readText(errors, 'notes', patch.notes, { max: CUSTOMER_LIMITS.notes, keepWhitespace: true }) ?? null;
  }
  if (has('tags')) out.tags = readTags(errors, patch.tags);
  if (has('status')) out.status = readEnum(errors, 'status', patch.status, CUSTOMER_STATUSES);
  errors.throwIfAny();
  return out;
}
