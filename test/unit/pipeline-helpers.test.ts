/** Table tests for the pipeline's pure helpers. */
import { expect } from 'chai';
import _Ajv2020 from 'ajv/dist/2020.js';
import { effectiveSubscriptionStatus, todayInCasablanca } from '../../src/accounts/accounts.ts';
import { generateSecret, hashSecret, modeOfSecret, randomBase62, sameHash } from '../../src/accounts/keys.ts';
import { ALL_SCOPES, bundleScopes, parseScopes } from '../../src/accounts/scopes.ts';
import { parseIfMatch } from '../../src/api/pipeline/context.ts';
import { closeObjects } from '../../src/api/pipeline/schema.ts';
import { fieldErrors } from '../../src/api/pipeline/validate.ts';
import { UnauthenticatedLimiter } from '../../src/api/pipeline/unauthenticated.ts';

const Ajv2020 = _Ajv2020 as unknown as typeof _Ajv2020.default;

describe('pipeline helpers', () => {
  it('keys: format, prefix per mode, uniform base62, hashing', () => {
    for (const [mode, prefix] of [['test', 'svc_test_'], ['live', 'svc_live_'], ['account', 'svc_acct_']] as const) {
      const secret = generateSecret(mode);
      expect(secret.startsWith(prefix)).to.equal(true);
      expect(secret.length).to.equal(prefix.length + 43);
      expect(modeOfSecret(secret)).to.equal(mode);
    }
    for (const bad of ['', 'svc_test_', 'svc_prod_' + 'a'.repeat(43), 'svc_test_' + 'a'.repeat(31), 'svc_test_' + '!'.repeat(43)]) {
      expect(modeOfSecret(bad), bad).to.equal(null);
    }
    const counts = new Map<string, number>();
    for (const c of randomBase62(62_000)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).to.equal(62);
    for (const n of counts.values()) expect(n).to.be.within(700, 1300); // 1000 expected each
    const h = hashSecret('svc_test_x');
    expect(h).to.match(/^[0-9a-f]{64}$/);
    expect(sameHash(h, hashSecret('svc_test_x'))).to.equal(true);
    expect(sameHash(h, hashSecret('svc_test_y'))).to.equal(false);
    expect(sameHash(h, 'abc')).to.equal(false);
  });

  it('scope bundles are exactly CONTRACT section 8', () => {
    const readOnly = ['invoices:read', 'recurring:read', 'customers:read', 'organization:read', 'webhooks:read'];
    expect(bundleScopes('read_only')).to.deep.equal(readOnly);
    expect(bundleScopes('invoicing')).to.have.members([
      ...readOnly, 'invoices:write', 'invoices:finalize', 'invoices:send', 'invoices:payment', 'invoices:void', 'invoices:export', 'customers:write', 'recurring:write',
    ]);
    expect(bundleScopes('full_access')).to.have.members(ALL_SCOPES.filter((s) => !s.startsWith('organizations:')));
    expect(bundleScopes('full_access', 'account')).to.have.members(ALL_SCOPES);
    expect(ALL_SCOPES).to.have.length(20);
    expect(parseScopes(['invoices:read', ' invoices:read', ''], 'organization')).to.deep.equal(['invoices:read']);
    expect(() => parseScopes(['organizations:read'], 'organization')).to.throw(/account key/);
    expect(() => parseScopes(['nope'], 'account')).to.throw(/unknown scope "nope"/);
  });

  it('If-Match forms', () => {
    const cases: [string | undefined, number | undefined][] = [[undefined, undefined], ['"3"', 3], ['3', 3], [' "12" ', 12], ['*', undefined]];
    for (const [header, expected] of cases) expect(parseIfMatch(header), String(header)).to.equal(expected);
    for (const bad of ['"a"', '"1", "2"', '-1', '1.5', '"02"', '00', '"3', '3"']) expect(() => parseIfMatch(bad), bad).to.throw(/invalid/);
    // RFC 9110: If-Match compares strongly, so a weak tag can never match.
    for (const weak of ['W/"3"', 'w/"3"']) expect(() => parseIfMatch(weak), weak).to.throw(/invalid/);
  });

  it('subscription: expired when marked or after the period end (Africa/Casablanca)', () => {
    expect(effectiveSubscriptionStatus({ subscription_status: 'active', current_period_end: null }, '2026-05-01')).to.equal('active');
    expect(effectiveSubscriptionStatus({ subscription_status: 'active', current_period_end: '2026-05-01' }, '2026-05-01')).to.equal('active');
    expect(effectiveSubscriptionStatus({ subscription_status: 'active', current_period_end: '2026-04-30' }, '2026-05-01')).to.equal('expired');
    expect(effectiveSubscriptionStatus({ subscription_status: 'expired', current_period_end: null }, '2026-05-01')).to.equal('expired');
    expect(todayInCasablanca(new Date('2026-07-01T23:30:00Z'))).to.equal('2026-07-02'); // UTC+1 outside Ramadan
  });

  it('closes object schemas unless they say otherwise', () => {
    const closed = closeObjects({
      type: 'object',
      properties: { a: { type: 'object', properties: {} }, b: { type: 'array', items: { type: 'object' } }, c: { type: 'object', additionalProperties: true } },
    });
    expect(closed.additionalProperties).to.equal(false);
    const p = closed.properties as any;
    expect(p.a.additionalProperties).to.equal(false);
    expect(p.b.items.additionalProperties).to.equal(false);
    expect(p.c.additionalProperties).to.equal(true);
  });

  it('field paths and messages from ajv errors', () => {
    const ajv = new Ajv2020({ allErrors: true, strictTypes: false });
    const validate = ajv.compile(
      closeObjects({
        type: 'object',
        required: ['items'],
        properties: {
          items: { type: 'array', maxItems: 2, items: { type: 'object', properties: { quantity: { type: ['number', 'string'], exclusiveMinimum: 0 } } } },
          'a/b': { type: 'string', minLength: 1 },
          rate: { anyOf: [{ type: 'number', maximum: 100 }, { type: 'string', pattern: '^\\d+$' }] },
        },
      }),
    );
    validate({ items: [{ quantity: 0 }, { quantity: true, x: 1 }, {}], 'a/b': '', rate: 101 });
    expect(fieldErrors(validate.errors!, 'body')).to.deep.equal([
      { field: 'items', message: 'must have at most 2 items' },
      { field: 'items[0].quantity', message: 'must be greater than 0' },
      { field: 'items[1].x', message: 'is not allowed' },
      { field: 'items[1].quantity', message: 'must be a number or a string' },
      { field: 'a/b', message: 'must not be empty' },
      { field: 'rate', message: 'must be less than or equal to 100' },
    ]);
    validate({});
    expect(fieldErrors(validate.errors!, 'body')).to.deep.equal([{ field: 'items', message: 'is required' }]);
    validate([]);
    expect(fieldErrors(validate.errors!, 'body')).to.deep.equal([{ field: 'body', message: 'must be an object' }]);
  });
  it('the address limiter: a known key passes a blocked address for 10 minutes, and no more once it failed', () => {
    const limiter = new UnauthenticatedLimiter(2);
    const secret = `svc_test_${'k'.repeat(43)}`;
    const req = (key: string | null) => ({ ip: '203.0.113.7', headers: key ? { authorization: `Bearer ${key}` } : {}, rawHeaders: key ? ['Authorization', `Bearer ${key}`] : [] }) as any;
    const res = { setHeader() {} } as any;
    const t0 = Date.UTC(2026, 10, 28, 12);
    limiter.succeeded(hashSecret(secret), t0);
    limiter.failed(req(null), t0);
    limiter.failed(req(`svc_test_${'x'.repeat(43)}`), t0);
    expect(() => limiter.check(req(null), res, t0 + 1000)).to.throw('Too many requests');
    expect(() => limiter.check(req(secret), res, t0 + 1000)).not.to.throw();
    expect(() => limiter.check(req(`svc_test_${'y'.repeat(43)}`), res, t0 + 1000)).to.throw('Too many requests');
    // Ten minutes after its last success it is a stranger again (the address is blocked anew here).
    limiter.failed(req(null), t0 + 10 * 60_000);
    limiter.failed(req(null), t0 + 10 * 60_000);
    expect(() => limiter.check(req(secret), res, t0 + 10 * 60_000 + 1)).to.throw('Too many requests');
    // A key that fails (revoked since) is forgotten at once.
    limiter.succeeded(hashSecret(secret), t0 + 10 * 60_000 + 2);
    expect(() => limiter.check(req(secret), res, t0 + 10 * 60_000 + 3)).not.to.throw();
    limiter.failed(req(secret), t0 + 10 * 60_000 + 3);
    expect(() => limiter.check(req(secret), res, t0 + 10 * 60_000 + 4)).to.throw('Too many requests');
  });
});
