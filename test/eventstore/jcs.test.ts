/**
 * The hash chain's canonical JSON (src/eventstore/jcs.ts) against the
 * `canonicalize` package, RFC 8785's reference implementation for
 * JavaScript: the same text for every JSON value, and the same refusals.
 */
import { expect } from 'chai';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { canonicalJson } from '../../src/eventstore/jcs.ts';

describe('canonical JSON (RFC 8785)', () => {
  it('prints what the reference implementation prints, for any JSON value', () => {
    const json = fc.jsonValue({ maxDepth: 5 });
    fc.assert(fc.property(json, (value) => canonicalJson(value) === canonicalize(value)), { numRuns: 3000 });
  });

  it('the same (or the same refusal) for strings of any UTF-16 units, keys included, and numbers of any magnitude', () => {
    const text = fc.string({ unit: 'binary', maxLength: 12 }); // any UTF-16 units, lone surrogates too
    const number = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.constant(-0), fc.constant(1e21), fc.constant(5e-324));
    const value = fc.dictionary(text, fc.oneof(text, number, fc.boolean(), fc.constant(null), fc.array(fc.oneof(text, number))));
    const outcome = (f: () => string | undefined) => {
      try {
        return f();
      } catch {
        return 'refused';
      }
    };
    fc.assert(fc.property(value, (v) => outcome(() => canonicalJson(v)) === outcome(() => canonicalize(v))), { numRuns: 3000 });
  });

  it('sorts members by UTF-16 code units (RFC 8785 section 3.2.3), not by code points or locale', () => {
    // U+1F600 is stored as the surrogates D83D DE00, which sort before U+FB01 (as code points it would sort after).
    const value = { '\u{1F600}': 1, '\ufb01': 2, b: 3, B: 4, a: 5, é: 6, '': 7, '10': 8, '9': 9 };
    expect(canonicalJson(value)).to.equal(canonicalize(value));
    expect(canonicalJson(value)).to.equal('{"":7,"10":8,"9":9,"B":4,"a":5,"b":3,"é":6,"😀":1,"ﬁ":2}');
  });

  it('RFC 8785 appendix examples: numbers and escapes', () => {
    // eslint-disable-next-line no-loss-of-precision -- the RFC's own example: the literal is rounded to the nearest double
    expect(canonicalJson({ numbers: [333333333.33333329, 1e30, 4.5, 2e-3, 0.000000000000000000000000001, -0] })).to.equal(
      '{"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27,0]}',
    );
    expect(canonicalJson({ string: '\u20ac$\u000f\u000aA\'\u0042\u0022\u005c\\"/' })).to.equal('{"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  });

  it('drops members without a JSON value, prints them as null in arrays, and follows toJSON', () => {
    const value = { a: undefined, b: () => 1, c: [undefined, () => 1, Symbol('s')], d: new Date(Date.UTC(2026, 10, 26)), e: Object(5) };
    expect(canonicalJson(value)).to.equal(canonicalize(value));
    expect(canonicalJson(value)).to.equal('{"c":[null,null,null],"d":"2026-11-26T00:00:00.000Z","e":5}');
    expect(canonicalJson(undefined)).to.equal(undefined);
  });

  it('refuses what the reference refuses: NaN, infinities, lone surrogates, BigInt', () => {
    for (const bad of [{ n: Number.NaN }, { n: Infinity }, { s: 'a\ud800' }, { ['\udc00']: 1 }, { b: 10n }]) {
      expect(() => canonicalize(bad), JSON.stringify(Object.keys(bad))).to.throw();
      expect(() => canonicalJson(bad), JSON.stringify(Object.keys(bad))).to.throw();
    }
  });
});
