/** Pure table tests: signatures (vectors computed with openssl), retry delays, secrets. */
import { expect } from 'chai';
import { JITTER, maxAttempts, outcomeOf, retryDelayMs } from '../../src/workers/webhooks/retry.ts';
import { generateSecret, openSecret, sealSecret, secretHint } from '../../src/workers/webhooks/secrets.ts';
import { deliveryBody, hmacHex, signatureTimestamp, signedHeaders } from '../../src/workers/webhooks/signing.ts';

const SECRET = 'whsec_5Ng7xQ';

describe('webhooks: signatures', () => {
  // printf '%s' '<ts>.<body>' | openssl dgst -sha256 -hmac '<secret>' -hex
  const vectors: [string, number, string, string][] = [
    [SECRET, 1700000000, '{"event":"invoice.paid","data":{"id":"x","total":"36.00"}}', 'acb917a8cd1f36ddb7f8ebd00e7295ea3494c492ecce796bfd32850208045036'],
    [SECRET, 1700000000123, '{"café":"Fès"}', '06d074c122976079964cc33c66754b35cfbc0958228002d0c9259b5586c1a0cd'],
    ['whsec_ünï', 1700000000, '', '33d9e9b8beff20fd2c5fe8fcfce08d6e20bdb4511af382ac5ae2473a204d39e7'],
  ];
  for (const [secret, ts, body, hex] of vectors) {
    it(`HMAC-SHA256 of "${ts}.${body.slice(0, 20)}..." keyed by the secret's UTF-8 bytes`, () => {
      expect(hmacHex(secret, ts, body)).to.equal(hex);
      expect(hmacHex(secret, ts, Buffer.from(body, 'utf8'))).to.equal(hex);
    });
  }

  const now = 1700000000123;
  const cases: [string, 'A' | 'B', Record<string, string>][] = [
    ['A', 'A', {
      'Content-Type': 'application/json',
      'X-Webhook-Signature': `v1=${vectors[0][3]}`,
      'X-Webhook-Timestamp': '1700000000',
      'X-Webhook-Event': 'invoice.paid',
      'X-Webhook-Delivery-Id': 'd-1',
      'User-Agent': 'Service-Webhooks/1.0',
    }],
    ['B', 'B', {
      'Content-Type': 'application/json',
      'X-Service-Signature': hmacHex(SECRET, now, vectors[0][2]),
      'X-Service-Timestamp': '1700000000123',
      'X-Service-Event': 'invoice.paid',
      'X-Service-Delivery-ID': 'd-1',
      'User-Agent': 'Service-Webhook/1.0',
    }],
  ];
  for (const [name, convention, headers] of cases) {
    it(`convention ${name}: exactly these headers`, () => {
      const signed = signedHeaders({ convention, secret: SECRET, body: vectors[0][2], eventName: 'invoice.paid', deliveryId: 'd-1', nowMs: now });
      expect(signed.headers).to.deep.equal(headers);
      expect(signed.timestamp).to.equal(convention === 'A' ? 1700000000 : now);
    });
  }

  it('a test delivery carries one more header, X-Webhook-Test (A) or X-Service-Test (B); a real one none', () => {
    const sign = (convention: 'A' | 'B', test?: boolean) =>
      signedHeaders({ convention, secret: SECRET, body: vectors[0][2], eventName: 'invoice.paid', deliveryId: 'd-1', nowMs: now, test }).headers;
    expect(sign('A', true)).to.deep.equal({ ...sign('A'), 'X-Webhook-Test': 'true' });
    expect(sign('B', true)).to.deep.equal({ ...sign('B'), 'X-Service-Test': 'true' });
    expect(sign('A', false)).to.deep.equal(sign('A'));
  });

  it('timestamps: A in seconds (floor), B in milliseconds', () => {
    expect(signatureTimestamp('A', 1700000000999)).to.equal(1700000000);
    expect(signatureTimestamp('B', 1700000000999)).to.equal(1700000000999);
  });

  it('bodies: field order and names of each convention', () => {
    const e = { id: 'e-1', name: 'customer.created', organizationId: 'o-1', createdAt: '2025-01-02T03:04:05.678Z', data: { id: 'c-1' } };
    expect(deliveryBody('A', e)).to.equal('{"event":"customer.created","data":{"id":"c-1"},"organization_id":"o-1","created_at":"2025-01-02T03:04:05.678Z"}');
    expect(deliveryBody('B', e)).to.equal('{"id":"e-1","type":"customer.created","created":"2025-01-02T03:04:05.678Z","data":{"id":"c-1"},"organization_id":"o-1"}');
  });
});

describe('webhooks: retry ladder', () => {
  const ladder = [60_000, 300_000, 900_000, 3_600_000, 14_400_000];
  const table: [number, number, number | null][] = [
    // failed attempts, random, delay
    [1, 0.5, 60_000],
    [1, 0, 48_000],
    [1, 0.9999999999, 72_000],
    [2, 0.5, 300_000],
    [3, 0, 720_000],
    [4, 0.5, 3_600_000],
    [5, 0.9999999999, 17_280_000],
    [6, 0.5, null],
    [0, 0.5, null],
  ];
  for (const [failed, random, delay] of table) {
    it(`after ${failed} failed attempt(s), random ${random}: ${delay ?? 'no retry'}`, () => {
      expect(retryDelayMs(failed, ladder, () => random)).to.equal(delay);
    });
  }

  it('jitter stays within +-20% over many draws', () => {
    for (let i = 0; i < 1000; i++) expect(retryDelayMs(2, ladder)).to.be.within(300_000 * (1 - JITTER), 300_000 * (1 + JITTER));
  });

  it('six attempts at most; the sixth failure is final; success ends the series; tests get one attempt', () => {
    expect(maxAttempts(ladder)).to.equal(6);
    expect(outcomeOf(0, true, ladder)).to.deep.equal({ status: 'succeeded', attemptCount: 1, delayMs: null });
    expect(outcomeOf(0, false, ladder, { random: () => 0.5 })).to.deep.equal({ status: 'pending', attemptCount: 1, delayMs: 60_000 });
    expect(outcomeOf(4, false, ladder, { random: () => 0.5 })).to.deep.equal({ status: 'pending', attemptCount: 5, delayMs: 14_400_000 });
    expect(outcomeOf(5, false, ladder)).to.deep.equal({ status: 'failed', attemptCount: 6, delayMs: null });
    expect(outcomeOf(0, false, ladder, { test: true })).to.deep.equal({ status: 'failed', attemptCount: 1, delayMs: null });
  });
});

describe('webhooks: secrets', () => {
  it('whsec_ + 40 base62 characters, never twice the same', () => {
    const a = generateSecret();
    expect(a).to.match(/^whsec_[0-9A-Za-z]{40}$/);
    expect(generateSecret()).to.not.equal(a);
    expect(secretHint(a)).to.equal(`whsec_...${a.slice(-4)}`);
  });

  it('sealed with a key (AES-256-GCM), stored as is without one; opening needs the same key', () => {
    const key = Buffer.alloc(32, 7);
    const secret = generateSecret();
    const sealed = sealSecret(secret, key);
    expect(sealed).to.match(/^aes256gcm:/).and.not.include(secret.slice(6));
    expect(openSecret(sealed, key)).to.equal(secret);
    expect(() => openSecret(sealed, null)).to.throw(/WEBHOOK_SECRET_KEY: is needed/);
    expect(() => openSecret(sealed, Buffer.alloc(32, 8))).to.throw(/another key/);
    expect(sealSecret(secret, null)).to.equal(secret);
    expect(openSecret(secret, key)).to.equal(secret);
  });
});
