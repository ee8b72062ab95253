/**
 * An archived organization's deliveries wait (not attempted, not counted)
 * and flow once it is restored; and the 'webhooks' role of a real server
 * picks its settings from the environment.
 */
import { expect } from 'chai';
import { loadConfig } from '../../src/config.ts';
import { webhookAllowInsecure } from '../../src/workers/webhooks/index.ts';
import { startTestServer } from '../support/server.ts';
import { startHarness, type Harness } from './harness.ts';
import { appendInvoice, newEndpoint, newOrganization, Receiver, until } from './support.ts';

describe('webhooks: archived organizations', () => {
  let h: Harness;
  let receiver: Receiver;
  beforeEach(async () => {
    h = await startHarness({ retryDelaysMs: [200, 200, 200, 200, 200], pollMs: 200 });
    receiver = await new Receiver().start();
  });
  afterEach(async () => {
    await receiver.stop();
    await h.stop();
  });

  const archive = (org: string, archived: boolean) => h.t.db.updateTable('organizations').set({ archived }).where('id', '=', org).execute();
  const deliveries = () => h.t.db.selectFrom('webhook_deliveries').selectAll().orderBy('created_at').orderBy('id').execute();
  /** Waits until the sender has looked for due deliveries after every pending one was due: it then chose not to send them. */
  const senderLookedAfterDue = async () => {
    const due = (await deliveries()).map((d) => d.next_attempt_at!.getTime());
    await until(() => h.senders[0].drainedAt > Math.max(...due), 5000);
  };

  it('deliveries of an archived organization wait, uncounted, and flow after restore', async () => {
    const org = await newOrganization(h.t.db, true);
    await newEndpoint(h.t.db, org, receiver.url(), 'A');
    await appendInvoice(h.store, org, ['InvoiceCreated', 'InvoiceUpdated']);
    await until(async () => (await deliveries()).length === 2);
    await senderLookedAfterDue();
    expect(receiver.requests).to.have.length(0);
    expect((await deliveries()).map((d) => [d.status, d.attempt_count])).to.deep.equal([['pending', 0], ['pending', 0]]);
    expect(await h.t.db.selectFrom('webhook_attempts').selectAll().execute()).to.have.length(0);
    await archive(org, false);
    await until(() => receiver.requests.length === 2, 5000);
    await until(async () => (await deliveries()).every((d) => d.status === 'succeeded' && d.attempt_count === 1));
  });

  it('archived between retries: the due retry waits, then resumes the same series', async () => {
    receiver.behavior = (_r, i) => ({ status: i === 0 ? 500 : 200 });
    const org = await newOrganization(h.t.db);
    await newEndpoint(h.t.db, org, receiver.url(), 'B');
    await appendInvoice(h.store, org);
    await until(() => receiver.requests.length === 1);
    await archive(org, true);
    await until(async () => (await deliveries())[0].attempt_count === 1); // the failure is recorded, the retry scheduled
    await senderLookedAfterDue(); // the retry was due ~200 ms after the failure
    expect(receiver.requests).to.have.length(1);
    await archive(org, false);
    await until(async () => (await deliveries())[0]?.status === 'succeeded', 5000);
    expect((await deliveries())[0].attempt_count).to.equal(2);
  });
});

describe('webhooks: process wiring', () => {
  it('WEBHOOK_ALLOW_INSECURE defaults to true only in test mode on the embedded database', () => {
    const cases: [Record<string, string>, boolean, boolean][] = [
      [{}, true, true],
      [{}, false, false],
      [{ SERVICE_MODE: 'live' }, true, false],
      [{ WEBHOOK_ALLOW_INSECURE: 'true' }, false, true],
      [{ WEBHOOK_ALLOW_INSECURE: 'false' }, true, false],
      [{ SERVICE_MODE: 'live', WEBHOOK_ALLOW_INSECURE: 'true' }, false, true],
    ];
    for (const [env, embedded, expected] of cases) {
      expect(webhookAllowInsecure(loadConfig(env), embedded), JSON.stringify({ env, embedded })).to.equal(expected);
    }
  });

  it("a server's 'webhooks' role delivers, with the retry ladder from WEBHOOK_RETRY_DELAYS_MS", async () => {
    const receiver = await new Receiver().start();
    receiver.behavior = (_r, i) => ({ status: i === 0 ? 503 : 200 });
    const server = await startTestServer({ roles: ['api', 'webhooks'], env: { WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_RETRY_DELAYS_MS: '300' } });
    try {
      const db = server.database.db;
      const org = await newOrganization(db);
      await newEndpoint(db, org, receiver.url(), 'A');
      await appendInvoice(server.server.runtime.store, org);
      await until(() => receiver.requests.length === 2, 10_000);
      const gap = receiver.requests[1].at - receiver.requests[0].at;
      expect(gap).to.be.within(240, 700);
    } finally {
      await server.stop();
      await receiver.stop();
    }
  });
});
