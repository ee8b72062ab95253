/**
 * Webhook delivery under faults (docs/reliability.md): a receiver that
 * resets connections, hangs past the timeout, answers slowly or with 500,
 * while every database connection of the subscriber and the two senders is
 * terminated three times. Afterwards every delivery succeeded, and no
 * delivery id was answered 2xx twice (nothing acknowledged by the receiver
 * is sent again).
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { startHarness, type Harness } from '../webhooks/harness.ts';
import { appendInvoice, newEndpoint, newOrganization, Receiver } from '../webhooks/support.ts';
import { until } from '../support/wait.ts';

const EVENTS = 120;

describe('faults: webhook receivers misbehave while the database connections die', function () {
  this.timeout(300_000);
  let h: Harness;
  let receiver: Receiver;

  afterEach(async () => {
    await receiver?.stop();
    await h?.stop();
  });

  it('reset, hang, slow and 500 answers, backends terminated 3 times: every delivery succeeds once', async () => {
    h = await startHarness({ senders: 2, timeoutMs: 1000, retryDelaysMs: [100, 200, 300, 400, 500] });
    receiver = await new Receiver().start();
    const firstSeen = new Set<string>();
    const succeeded = new Map<string, number>();
    receiver.behavior = (r) => {
      const id = String(r.headers['x-webhook-delivery-id'] ?? r.headers['x-service-delivery-id']);
      const first = !firstSeen.has(id);
      firstSeen.add(id);
      const kind = parseInt(id.replace(/-/g, '').slice(-2), 16) % 5;
      if (first && kind === 0) return { reset: true };
      if (first && kind === 1) return { hang: true };
      if (first && kind === 2) return { status: 500 };
      succeeded.set(id, (succeeded.get(id) ?? 0) + 1);
      return kind === 3 ? { delayMs: 300 } : {};
    };
    const org = await newOrganization(h.t.db);
    await newEndpoint(h.t.db, org, receiver.url(), 'A');
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < EVENTS / 3; i += 10) await Promise.all(Array.from({ length: 10 }, () => appendInvoice(h.store, org)));
      await until(() => receiver.requests.length > (round + 1) * 10, 60_000, 'deliveries flowing');
      const { rows } = await sql<{ n: number }>`
        select count(*) filter (where pg_terminate_backend(pid))::int as n from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid() and application_name like 'invoicing%'`.execute(h.t.db);
      expect(rows[0].n, 'connections terminated').to.be.greaterThan(0);
    }
    await until(
      async () => (await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries where status = 'succeeded'`.execute(h.t.db)).rows[0].n === EVENTS,
      120_000,
      'every delivery succeeded',
      100,
    );
    const { rows } = await sql<{ n: number; pairs: number }>`
      select count(*)::int as n, count(distinct (event_id, endpoint_id))::int as pairs from webhook_deliveries`.execute(h.t.db);
    expect(rows[0]).to.deep.equal({ n: EVENTS, pairs: EVENTS });
    expect(succeeded.size, 'delivery ids answered 2xx').to.equal(EVENTS);
    expect([...succeeded].filter(([, n]) => n > 1), 'delivery ids answered 2xx more than once').to.deep.equal([]);
  });
});
