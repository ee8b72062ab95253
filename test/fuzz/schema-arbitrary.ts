/**
 * fast-check arbitraries from the JSON schemas of the OpenAPI document (the
 * very schemas ajv validates requests with): `valid(schema)` generates values
 * the schema accepts (mostly: patterns and formats are approximated), and
 * `mutated(schema)` values that are wrong in one or more places (a wrong
 * type, a missing required field, an unknown field, a value beyond a bound,
 * hostile strings), so the suite exercises both the handlers and every
 * refusal path.
 */
import fc from 'fast-check';

type Schema = Record<string, any>;

/** Strings an attacker tries: NUL, lone surrogates, RTL marks, SQL and HTML fragments, huge ones. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\ud800', '\udfff', '\u202e', '\ufeff', "'; drop table invoices; --", '<script>alert(1)</script>', '../../etc/passwd', '%00', '${7*7}', '\\', 'null', 'NaN', '-0', '1e309', '0x10'),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ minLength: 300, maxLength: 3000 }),
);

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom(null, true, false, 0, -1, 1.5, -0.0001, 1e21, 2 ** 53 + 2, -(2 ** 63), Number.MAX_VALUE, [], {}, [null], { a: { b: { c: {} } } }),
  fc.double({ noNaN: true }),
  fc.integer(),
  fc.jsonValue({ maxDepth: 3 }),
);

function typesOf(s: Schema): string[] {
  if (Array.isArray(s.type)) return s.type;
  if (typeof s.type === 'string') return [s.type];
  if (s.properties) return ['object'];
  if (s.enum) return ['enum'];
  return [];
}

const iso = (d: Date) => d.toISOString().slice(0, 10);

function stringFor(s: Schema): fc.Arbitrary<string> {
  if (s.enum) return fc.constantFrom(...(s.enum as string[]));
  if (s.const !== undefined) return fc.constant(s.const);
  switch (s.format) {
    case 'uuid':
      return fc.uuid();
    case 'date':
      return fc.date({ min: new Date('2020-01-01'), max: new Date('2030-12-31'), noInvalidDate: true }).map(iso);
    case 'date-time':
      return fc.date({ min: new Date('2020-01-01'), max: new Date('2030-12-31'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'email':
      return fc.emailAddress();
    case 'uri':
      return fc.webUrl();
  }
  if (s.pattern) {
    try {
      return fc.stringMatching(new RegExp(s.pattern)).filter((v) => (s.maxLength === undefined || v.length <= s.maxLength) && v.length >= (s.minLength ?? 0));
    } catch {
      /* a pattern fast-check cannot invert: plain strings below */
    }
  }
  return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 40, 80) });
}

function numberFor(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + (integer ? 1 : 0.01) : integer ? -1000 : -1000);
  const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - (integer ? 1 : 0.01) : 1_000_000);
  return integer ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).map((v) => Math.round(v * 100) / 100);
}

/** Values the schema accepts (as far as patterns and formats allow). */
export function valid(s: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (s.anyOf || s.oneOf) return fc.oneof(...(s.anyOf ?? s.oneOf).map((x: Schema) => valid(x, depth)));
  if (s.allOf) return valid(Object.assign({}, ...s.allOf), depth);
  if (s.enum) return fc.constantFrom(...s.enum);
  const options = typesOf(s).map((t): fc.Arbitrary<unknown> => {
    switch (t) {
      case 'string':
        return stringFor(s);
      case 'integer':
        return numberFor(s, true);
      case 'number':
        return fc.oneof(numberFor(s, false), numberFor(s, false).map(String));
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return depth > 4 ? fc.constant([]) : fc.array(valid(s.items ?? {}, depth + 1), { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 4, 4) });
      case 'object':
        return objectFor(s, depth);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  });
  return options.length ? fc.oneof(...options) : fc.jsonValue({ maxDepth: 2 });
}

function objectFor(s: Schema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const props = (s.properties ?? {}) as Record<string, Schema>;
  if (depth > 4) return fc.constant({});
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, v] of Object.entries(props)) record[k] = valid(v, depth + 1);
  return fc.record(record, { requiredKeys: (s.required ?? []).filter((k: string) => k in props) });
}

/** A valid value, then 1..3 mutations somewhere in it. */
export function mutated(s: Schema): fc.Arbitrary<unknown> {
  return fc.tuple(valid(s), fc.array(fc.tuple(fc.nat(), fc.nat(6), hostileValue, fc.string({ minLength: 1, maxLength: 12 })), { minLength: 1, maxLength: 3 })).map(([value, edits]) => {
    let v: unknown = structuredClone(value);
    // constantFrom hands out the same object every time: a copy, or an edit could put an object inside itself
    // (a body JSON cannot send) and later samples would see earlier samples' edits.
    for (const [where, how, replacement, name] of edits) v = mutate(v, s, where, how, structuredClone(replacement), name);
    return v;
  });
}

function mutate(v: unknown, s: Schema, where: number, how: number, replacement: unknown, name: string): unknown {
  if (v === null || typeof v !== 'object') return how % 2 ? replacement : v;
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj);
  const key = keys.length ? keys[where % keys.length] : undefined;
  switch (how) {
    case 0: // a field gets a hostile value
      if (key !== undefined) obj[key] = replacement;
      return obj;
    case 1: // a required field goes missing
      if (key !== undefined) delete obj[key];
      return obj;
    case 2: // an unknown field
      obj[`x_${name}`] = replacement;
      return obj;
    case 3: // the whole body is something else
      return replacement;
    case 4: // recurse into a nested value
      if (key !== undefined) obj[key] = mutate(obj[key], s.properties?.[key] ?? {}, where >> 1, (where >> 3) % 6, replacement, name);
      return obj;
    default: // a value beyond its bounds
      if (key !== undefined) obj[key] = typeof obj[key] === 'string' ? `${obj[key]}`.repeat(200) : typeof obj[key] === 'number' ? (obj[key] as number) * 1e12 + 1 : replacement;
      return obj;
  }
}
