/**
 * RFC 8785 (JSON Canonicalization Scheme) of a JSON value: object members
 * sorted by the UTF-16 code units of their names, no whitespace, numbers
 * as ECMAScript prints them, strings as JSON.stringify escapes them.
 *
 * Written here rather than taken from the `canonicalize` package, which
 * the chain used first and which stays the independent oracle of the tests
 * (test/eventstore/jcs.test.ts compares the two on generated values, and
 * test/eventstore/chain-contract.ts recomputes chains with it): every
 * append canonicalizes its events and `audit verify` every event of the
 * log, and the package's general machinery (an explicit stack, a set for
 * cycles, a JSON.stringify call per string) made it the largest cost of a
 * verify, 17 to 23 us per 1.4 KB event against 10 us here
 * (docs/performance.md "Audit"). Two shortcuts give the speed: a string
 * with nothing to escape is quoted as it is, and members already in order
 * are not sorted again.
 *
 * Refused like the package refuses them: numbers that are not finite,
 * strings with a lone surrogate, BigInts. Cycles end in a RangeError (the
 * call stack), which an event built from JSON cannot have.
 */

// A quote, a backslash, a control character or any surrogate (then the string is checked for lone ones).
// eslint-disable-next-line no-control-regex -- control characters are exactly what JSON must escape
const NEEDS_CARE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** ES2024's String.prototype.isWellFormed (Node 20 has it; the compiler's lib is ES2022). */
type WellFormedCheck = string & { isWellFormed(): boolean };

function quoted(s: string): string {
  if (!NEEDS_CARE.test(s)) return `"${s}"`;
  if (!(s as WellFormedCheck).isWellFormed()) throw new Error('Lone surrogate is not allowed');
  return JSON.stringify(s);
}

/** The canonical text of `value`, or undefined where JSON has none (undefined, a function, a symbol). */
export function canonicalJson(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return quoted(value);
    case 'number':
      if (!Number.isFinite(value)) throw new Error(`${value} is not allowed`);
      return String(value); // what JSON.stringify prints for a finite number, -0 as 0
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt');
    case 'object':
      return value === null ? 'null' : container(value);
    default:
      return undefined;
  }
}

function container(value: object): string | undefined {
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return canonicalJson((value as { toJSON(): unknown }).toJSON());
  if (value instanceof Number || value instanceof String || value instanceof Boolean) return canonicalJson(value.valueOf());
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += canonicalJson(value[i]) ?? 'null'; // as JSON.stringify: no representation is null inside an array
    }
    return `${out}]`;
  }
  const keys = Object.keys(value);
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1] > keys[i]) {
      keys.sort(); // the default order compares UTF-16 code units, which is RFC 8785's
      break;
    }
  }
  let out = '{';
  let first = true;
  for (const key of keys) {
    const member = canonicalJson((value as Record<string, unknown>)[key]);
    if (member === undefined) continue;
    out += `${first ? '' : ','}${quoted(key)}:${member}`;
    first = false;
  }
  return `${out}}`;
}
