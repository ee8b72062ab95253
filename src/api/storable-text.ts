/**
 * Text that JSON and JavaScript accept but PostgreSQL cannot store: the NUL
 * character (text and jsonb both refuse U+0000) and unpaired UTF-16
 * surrogates (JSON.stringify writes "\ud800", which jsonb rejects). Without
 * this check such input reaches the event store or a query parameter and
 * fails there as a 500; with it, it is a VALIDATION_ERROR naming the field.
 *
 * Used by the customer routes on body and query. It belongs in the request
 * pipeline for every route (src/api/pipeline/validate.ts), which can call
 * unstorableText() on the parsed body and query unchanged.
 */
import { validationError, type FieldError } from '../shared/errors.ts';

// Without the u flag, so surrogate halves are seen one by one.
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function unstorable(text: string): boolean {
  return text.includes('\u0000') || UNPAIRED_SURROGATE.test(text);
}

const MESSAGE = 'must not contain NUL characters or invalid Unicode';

function walk(value: unknown, path: string, out: FieldError[]): void {
  if (out.length >= 50) return;
  if (typeof value === 'string') {
    if (unstorable(value)) out.push({ field: path || 'body', message: MESSAGE });
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => walk(item, `${path}[${i}]`, out));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      // A key is stored too (unknown keys are refused later, but by then it is too late to say why).
      if (unstorable(key)) out.push({ field: path || 'body', message: `keys ${MESSAGE}` });
      else walk(item, path ? `${path}.${key}` : key, out);
    }
  }
}

/** Every field whose text PostgreSQL could not store, with readable paths ('tags[0]', 'address.city'). */
export function unstorableText(value: unknown): FieldError[] {
  const out: FieldError[] = [];
  walk(value, '', out);
  return out;
}

/** Throws VALIDATION_ERROR when any of the inputs holds text PostgreSQL could not store. */
export function assertStorableText(...inputs: unknown[]): void {
  const fields = inputs.flatMap(unstorableText);
  if (fields.length > 0) throw validationError(fields);
}
