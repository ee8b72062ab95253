/**
 * Retries on a shortened ladder (100..500 ms would be too tight for 2 cores;
 * 200..1000 ms), the final failure, replay, and every attempt on record.
 */
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { replayDelivery } from '../../src/workers/webhooks/deliveries.ts';
import { JITTER } from '../../src/workers/webhooks/retry.ts';
import { startHarness, type Harness } from './harness.ts';
import { appendInvoice, newEndpoint, newOrganization, Receiver, until } from './support.ts';

const LADDER = [200, 400, 600, 800, 1000];
const SLACK_MS = 250; // flush + wake-up + a busy shared machine

describe('webhooks: retries and replay', () => {
  let h: Harness;
  let receiver: Receiver;
  beforeEach(async () => {
    h = await startHarness({ retryDelaysMs: LADDER });
    receiver = await new Receiver().start();
  });
  afterEach(async () => {
    await receiver.stop();
    await h.stop();
  });

  const delivery = () => h.t.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
  const status = async () => (await h.t.db.selectFrom('webhook_deliveries').select('status').executeTakeFirst())?.status;
  const attempts = (id: string) => h.t.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', id).orderBy('id').execute();

  function expectLadder(times: number[]) {
    for (let i = 1; i < times.length; i++) {
      const gap = times[i] - times[i - 1];
      expect(gap, `gap before attempt ${i + 1}`).to.be.within(LADDER[i - 1] * (1 - JITTER) - 5, LADDER[i - 1] * (1 + JITTER) + SLACK_MS);
    }
  }

  it('failing 3 times then 200: 4 attempts, one delivery id, delays on the ladder', async () => {
    receiver.behavior = (_r, i) => (i < 3 ? { status: i === 0 ? 500 : i === 1 ? 404 : 503, body: `no ${i}` } : { status: 200 });
    const org = await newOrganization(h.t.db);
    await newEndpoint(h.t.db, org, receiver.url(), 'A');
    await appendInvoice(h.store, org);
    await until(async () => (await status()) === 'succeeded');
    expect(receiver.requests).to.have.length(4);
    const d = await delivery();
    expect(new Set(receiver.requests.map((r) => r.headers['x-webhook-delivery-id']))).to.deep.equal(new Set([d.id]));
    expect(new Set(receiver.requests.map((r) => r.body.toString()))).to.have.property('size', 1); // same bytes every time
    expectLadder(receiver.requests.map((r) => r.at));
    expect(d).to.include({ attempt_count: 4, next_attempt_at: null, claim_token: null });
    const rows = await attempts(d.id);
    expect(rows.map((a) => [a.attempt_number, a.status_code, a.error, a.response_excerpt])).to.deep.equal([
      [1, 500, 'HTTP 500', 'no 0'],
      [2, 404, 'HTTP 404', 'no 1'],
      [3, 503, 'HTTP 503', 'no 2'],
      [4, 200, null, 'ok'],
    ]);
    expect(rows.map((a) => String(a.signature_timestamp))).to.deep.equal(receiver.requests.map((r) => r.headers['x-webhook-timestamp']));
  });

  it('failing 6 times: failed after the fifth retry; replay sends the same body under the same id, freshly signed, and succeeds', async () => {
    let fail = true;
    receiver.behavior = () => (fail ? { status: 500 } : { status: 204 });
    const org = await newOrganization(h.t.db);
    const ep = await newEndpoint(h.t.db, org, receiver.url(), 'B');
    await appendInvoice(h.store, org);
    await until(async () => (await status()) === 'failed', 20_000);
    const failedAt = Date.now();
    await until(() => h.senders.every((s) => s.drainedAt > failedAt), 5000); // every sender looked again: nothing more is due
    expect(receiver.requests).to.have.length(6);
    expectLadder(receiver.requests.map((r) => r.at));
    const failed = await delivery();
    expect(failed).to.include({ attempt_count: 6, next_attempt_at: null });

    fail = false;
    const replayed = await replayDelivery(h.t.db, failed.id);
    expect(replayed).to.include({ id: failed.id, status: 'pending', attempt_count: 0 });
    await until(async () => (await status()) === 'succeeded');
    expect(receiver.requests).to.have.length(7);
    const [first, last] = [receiver.requests[0], receiver.requests[6]];
    expect(last.headers['x-service-delivery-id']).to.equal(failed.id);
    expect(last.body.equals(first.body)).to.equal(true);
    expect(Number(last.headers['x-service-timestamp'])).to.be.greaterThan(Number(first.headers['x-service-timestamp']));
    const ts = String(last.headers['x-service-timestamp']);
    const mac = createHmac('sha256', ep.secret).update(`${ts}.`).update(last.body).digest('hex');
    expect(last.headers['x-service-signature']).to.equal(mac);
    expect(await delivery()).to.include({ status: 'succeeded', attempt_count: 1 });
    expect((await attempts(failed.id)).map((a) => a.attempt_number)).to.deep.equal([1, 2, 3, 4, 5, 6, 1]);
  });

  it('replay of a succeeded delivery sends it once more; replay of an unknown id is NOT_FOUND', async () => {
    const org = await newOrganization(h.t.db);
    await newEndpoint(h.t.db, org, receiver.url(), 'A');
    await appendInvoice(h.store, org);
    await until(async () => (await status()) === 'succeeded');
    const d = await delivery();
    await replayDelivery(h.t.db, d.id);
    await until(() => receiver.requests.length === 2);
    expect(receiver.requests[1].headers['x-webhook-delivery-id']).to.equal(d.id);
    let code = '';
    await replayDelivery(h.t.db, '00000000-0000-4000-8000-000000000000').catch((e) => (code = e.code));
    expect(code).to.equal('NOT_FOUND');
  });

  it('replay is refused while a sender holds the delivery', async () => {
    receiver.behavior = () => ({ hang: true });
    const org = await newOrganization(h.t.db);
    await newEndpoint(h.t.db, org, receiver.url(), 'A');
    await appendInvoice(h.store, org);
    await until(() => receiver.requests.length === 1);
    let message = '';
    await replayDelivery(h.t.db, (await delivery()).id).catch((e) => (message = `${e.code} ${e.message}`));
    expect(message).to.match(/^INVALID_STATE .* is being sent right now/);
  });
});
