/**
 * Field checks shared by the deciders. They collect every problem of a
 * command before throwing, so a client fixes a form in one round trip
 * (docs/api-decisions.md "Errors": details.fields = [{ field, message }]).
 * The API's JSON schemas reject wrong shapes and unknown fields first; these
 * checks are the domain rules and also keep the deciders safe on their own.
 */
import { validationError, type FieldError } from '../shared/errors.ts';
import countries from 'i18n-iso-countries';

export class FieldErrors {
  readonly fields: FieldError[] = [];

  add(field: string, message: string): void {
    this.fields.push({ field, message });
  }

  get isEmpty(): boolean {
    return this.fields.length === 0;
  }

  /** Whether one of `fields` is refused already: a rule reading them together then has no value to judge. */
  has(...fields: string[]): boolean {
    return this.fields.some((f) => fields.includes(f.field));
  }

  throwIfAny(): void {
    if (!this.isEmpty) throw validationError(this.fields);
  }
}

export interface TextRule {
  /** Absent or null is an error (else it reads as "no value"). */
  required?: boolean;
  max: number;
  /** Multi-line free text (notes) is stored as written; other text is trimmed. */
  keepWhitespace?: boolean;
}

/** Characters as a person counts them (code points, not UTF-16 units). */
export function charCount(text: string): number {
  return [...text].length;
}

/** Nothing a reader would see: white space and format characters only (a zero-width space, a direction mark, a BOM). */
const INVISIBLE = /^[\s\p{Cf}]*$/u;

/**
 * Reads one text field. Returns undefined when absent, null for "no value"
 * (null, or blank when optional: a cleared form field), else the text.
 */
export function readText(errors: FieldErrors, field: string, value: unknown, rule: TextRule): string | null | undefined {
  if (value === undefined || value === null) {
    if (rule.required) errors.add(field, 'is required');
    return value;
  }
  if (typeof value !== 'string') {
    errors.add(field, 'must be a string');
    return undefined;
  }
  const text = rule.keepWhitespace ? value : value.trim();
  if (INVISIBLE.test(text)) {
    if (rule.required) errors.add(field, 'must not be empty');
    return null;
  }
  if (charCount(text) > rule.max) {
    errors.add(field, `must be at most ${rule.max} characters`);
    return undefined;
  }
  return text;
}

/** Reads a value that must be one of a fixed list. */
export function readEnum<T extends string>(
  errors: FieldErrors,
  field: string,
  value: unknown,
  allowed: readonly T[],
): T | undefined {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  errors.add(field, `must be one of ${allowed.join(', ')}`);
  return undefined;
}

export const DEFAULT_COUNTRY = 'MA';
const ICE = /^\d{15}$/;

/** The ICE a body names when it is well formed (trimmed), else null: what a refused body's claim would be. */
export function wellFormedIce(value: unknown): string | null {
  const text = typeof value === 'string' ? value.trim() : '';
  return ICE.test(text) ? text : null;
}
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/**
 * The country codes an address may have: ISO 3166-1 alpha-2 as officially assigned (the list of the npm
 * package i18n-iso-countries without XK, a user-assigned code EN 16931's country list, BR-CL-14, refuses),
 * plus XI, Northern Ireland for VAT, which that list accepts: every address can go into a UBL invoice.
 * Kosovo (EN 16931's 1A, not two letters) cannot be entered (docs/domain-rules.md). Upper case.
 */
const COUNTRIES: ReadonlySet<string> = new Set([...Object.keys(countries.getAlpha2Codes()).filter((code) => code !== 'XK'), 'XI']);

/** An ICE (Identifiant Commun de l'Entreprise): exactly 15 digits. */
export function isIce(value: string): boolean {
  return ICE.test(value);
}

/** The `ice` field: 15 digits; any other text, however long, gets the digit rule's message. */
export function readIce(errors: FieldErrors, value: unknown): string | null | undefined {
  const ice = readText(errors, 'ice', value, { max: 100 });
  if (typeof ice === 'string' && !isIce(ice)) {
    errors.add('ice', 'must be exactly 15 digits');
    return undefined;
  }
  return ice;
}

/** The `email` field: optional, at most `max` characters, one @ and a dot in the domain. */
export function readEmail(errors: FieldErrors, value: unknown, max: number): string | null | undefined {
  const email = readText(errors, 'email', value, { max });
  if (typeof email === 'string' && !EMAIL.test(email)) {
    errors.add('email', 'must be a valid email address');
    return undefined;
  }
  return email;
}

export interface PostalAddress {
  street: string | null;
  city: string | null;
  postal_code: string | null;
  /** ISO 3166-1 alpha-2, default 'MA'. */
  country: string;
}

/**
 * A postal address object named `field` (its parts are reported as
 * `field.street` ...); absent or null is the empty address in Morocco.
 */
export function readAddress(
  errors: FieldErrors,
  field: string,
  value: unknown,
  limits: { street: number; city: number; postal_code: number },
): PostalAddress {
  const empty: PostalAddress = { street: null, city: null, postal_code: null, country: DEFAULT_COUNTRY };
  if (value === undefined || value === null) return empty;
  if (typeof value !== 'object' || Array.isArray(value)) {
    errors.add(field, 'must be an object');
    return empty;
  }
  const input = value as Partial<Record<keyof PostalAddress, unknown>>;
  const country = readText(errors, `${field}.country`, input.country, { max: 2 }) ?? DEFAULT_COUNTRY;
  if (!COUNTRIES.has(country)) errors.add(`${field}.country`, 'must be an ISO 3166-1 alpha-2 code such as MA');
  return {
    street: readText(errors, `${field}.street`, input.street, { max: limits.street }) ?? null,
    city: readText(errors, `${field}.city`, input.city, { max: limits.city }) ?? null,
    postal_code: readText(errors, `${field}.postal_code`, input.postal_code, { max: limits.postal_code }) ?? null,
    country,
  };
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** YYYY-MM-DD naming a real calendar day (2026-02-29 is not one). */
export function isCalendarDate(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return day <= days;
}

const DATETIME = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** UTC years 0001..9999: PostgreSQL has no year 0, and toISOString writes 10000 as '+010000'. */
const STORABLE_ISO = /^(?!0000)\d{4}-/;

/**
 * An ISO 8601 datetime with an explicit offset, normalized to UTC with
 * milliseconds (docs/api-decisions.md "Identifiers, dates and money"); null when it is not one, or when its UTC
 * year is outside 1..9999 (a timestamptz column could not take it, and the
 * event would stop the projector that stores it).
 */
export function normalizeDatetime(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const match = DATETIME.exec(value);
  if (!match || !isCalendarDate(match[1])) return null;
  const time = Date.parse(value);
  if (Number.isNaN(time)) return null;
  const iso = new Date(time).toISOString();
  return STORABLE_ISO.test(iso) ? iso : null;
}

/**
 * How far past the command's own time a datetime of something that already
 * happened (a payment's `paid_at`) may lie: room for the client's clock
 * being ahead of ours, not for recording the future (docs/api-decisions.md
 * "Invoice lifecycle").
 */
export const FUTURE_TOLERANCE_MS = 5 * 60_000;

/**
 * Reads a datetime of a past fact: ISO 8601 with a time zone, normalized to
 * UTC, at most FUTURE_TOLERANCE_MS after `now` (the command's time).
 * Undefined when absent or null; undefined with an error when invalid.
 */
export function readPastDatetime(errors: FieldErrors, field: string, value: unknown, now: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  const normalized = normalizeDatetime(value);
  if (normalized === null) {
    errors.add(field, 'must be an ISO 8601 datetime with a time zone');
    return undefined;
  }
  if (Date.parse(normalized) - Date.parse(now) > FUTURE_TOLERANCE_MS) {
    errors.add(field, `must not be more than ${FUTURE_TOLERANCE_MS / 60_000} minutes in the future`);
    return undefined;
  }
  return normalized;
}
