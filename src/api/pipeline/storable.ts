/**
 * Values that JSON and JavaScript accept but no route can store, refused by
 * the pipeline for every route (after ajv, so query numbers are coerced):
 * - the NUL character (PostgreSQL text and jsonb both refuse U+0000) and
 *   unpaired UTF-16 surrogates (JSON.stringify writes "\ud800", which jsonb
 *   rejects);
 * - the other characters XML 1.0 cannot carry: C0 controls other than tab,
 *   line feed and carriage return, and U+FFFE/U+FFFF. Stored, they would make
 *   every UBL document of the invoice ill-formed XML (docs/documents.md).
 * - numbers beyond 2^53 (not exact in JSON, and past every column);
 * - the bidirectional overrides U+202D and U+202E, which print the characters
 *   after them in reverse: on a legal document (the PDF) "evil #4" would read
 *   "#4 live" (the "Trojan Source" trick). Arabic text needs neither: its
 *   direction comes from its letters, and the marks U+200E/U+200F and the
 *   embeddings and isolates stay allowed.
 * Without this check such input fails later as a 500 in some query; with it,
 * it is a VALIDATION_ERROR naming every such field.
 */
import type { FieldError } from '../../shared/errors.ts';

// Without the u flag, so surrogate halves are seen one by one.
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

// eslint-disable-next-line no-control-regex -- these characters are what it finds
const NOT_IN_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;

function unstorable(text: string): boolean {
  return NOT_IN_XML.test(text) || UNPAIRED_SURROGATE.test(text);
}

const MESSAGE = 'must not contain control characters (other than tab and line breaks) or invalid Unicode';

const BIDI_OVERRIDE = /[\u202d\u202e]/;
const OVERRIDE_MESSAGE = 'must not contain the bidirectional overrides U+202D and U+202E (they print text reversed)';

function walk(value: unknown, path: string, out: FieldError[]): void {
  if (out.length >= 50) return;
  if (typeof value === 'string') {
    if (unstorable(value)) out.push({ field: path || 'body', message: MESSAGE });
    else if (BIDI_OVERRIDE.test(value)) out.push({ field: path || 'body', message: OVERRIDE_MESSAGE });
  } else if (typeof value === 'number') {
    if (Math.abs(value) > Number.MAX_SAFE_INTEGER) out.push({ field: path || 'body', message: 'is too large' });
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

/** Every field PostgreSQL could not store, with readable paths ('tags[0]', 'address.city'). */
export function unstorableFields(value: unknown): FieldError[] {
  const out: FieldError[] = [];
  walk(value, '', out);
  return out;
}
