/**
 * At scale: two sender processes (this one and a real `--role webhooks`
 * child) and 1,000 events, each (event, endpoint) delivered exactly once;
 * a receiver down while 1,000 events happen gets all of them once it is up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { sql } from 'kysely';
import { startHarness, type Harness } from './harness.ts';
import { appendInvoice, newEndpoint, newOrganization, Receiver, until } from './support.ts';

const EVENTS = 1000;

async function appendMany(h: Harness, org: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 20) {
    await Promise.all(Array.from({ length: Math.min(20, count - i) }, () => appendInvoice(h.store, org)));
  }
}

function startChild(url: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role', 'webhooks'], {
    env: { ...process.env, DATABASE_URL: url, WEBHOOK_ALLOW_INSECURE: 'true', LOG_LEVEL: 'info', DEMO_BOOTSTRAP: 'false', PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('"msg":"started"')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`child exited with ${code}: ${out.slice(-500)}`)));
  });
}

async function expectExactlyOnce(h: Harness, receiver: Receiver, deliveries: number) {
  const { rows } = await sql<{ n: number; pairs: number; ok: number }>`
    select count(*)::int as n, count(distinct (event_id, endpoint_id))::int as pairs,
           count(*) filter (where status = 'succeeded')::int as ok from webhook_deliveries`.execute(h.t.db);
  expect(rows[0]).to.deep.equal({ n: deliveries, pairs: deliveries, ok: deliveries });
  const ok = receiver.requests.length;
  expect(ok, 'requests received').to.equal(deliveries);
  expect(receiver.byDelivery().size, 'distinct delivery ids').to.equal(deliveries);
}

describe('webhooks: exactly once at scale', function () {
  this.timeout(180_000);
  let h: Harness;
  let receiver: Receiver;
  let child: ChildProcess | null = null;
  afterEach(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    child = null;
    await receiver.stop();
    await h.stop();
  });

  it('two sender processes, 1,000 events x 2 endpoints: every (event, endpoint) delivered once', async () => {
    h = await startHarness({ pollMs: 1000 });
    receiver = await new Receiver().start();
    child = await startChild(h.t.url);
    // Count what this process sends; the child sends the rest.
    const mine = new Set<string>();
    const sender = h.senders[0] as any;
    const launch = sender.launch.bind(sender);
    sender.launch = (d: { id: string }) => (mine.add(d.id), launch(d));
    const org = await newOrganization(h.t.db);
    await newEndpoint(h.t.db, org, receiver.url('/one'), 'A');
    await newEndpoint(h.t.db, org, receiver.url('/two'), 'B');
    await appendMany(h, org, EVENTS);
    await until(() => receiver.requests.length >= 2 * EVENTS, 60_000, 'all deliveries');
    await until(async () => (await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries where status = 'succeeded'`.execute(h.t.db)).rows[0].n === 2 * EVENTS, 10_000);
    const doneAt = Date.now();
    await until(() => h.senders[0].drainedAt > doneAt, 5000); // this process's sender looked again and found nothing due
    await expectExactlyOnce(h, receiver, 2 * EVENTS);
    expect(mine.size, 'sent by this process').to.be.within(1, 2 * EVENTS - 1);
  });

  it('receiver down while 1,000 events happen, then up: all delivered, none lost, none twice', async () => {
    h = await startHarness({ senders: 2, retryDelaysMs: [300, 600, 1200, 2400, 4800] });
    receiver = await new Receiver().start();
    const port = receiver.port;
    const org = await newOrganization(h.t.db);
    await newEndpoint(h.t.db, org, receiver.url(), 'A');
    await receiver.stop();
    await appendMany(h, org, EVENTS);
    await until(async () => (await sql<{ n: number }>`select count(*)::int as n from webhook_attempts`.execute(h.t.db)).rows[0].n >= EVENTS, 30_000, 'a failed attempt for every delivery');
    await receiver.start(port);
    await until(() => receiver.requests.length >= EVENTS, 60_000, 'all deliveries after the receiver came back');
    await until(async () => (await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries where status = 'succeeded'`.execute(h.t.db)).rows[0].n === EVENTS, 10_000);
    const doneAt = Date.now();
    await until(() => h.senders.every((s) => s.drainedAt > doneAt), 5000); // both senders looked again and found nothing due
    await expectExactlyOnce(h, receiver, EVENTS);
    const { rows } = await sql<{ failed: number }>`select count(*)::int as failed from webhook_attempts where status_code is null`.execute(h.t.db);
    expect(rows[0].failed).to.be.at.least(EVENTS); // every one of them was tried while the receiver was down
  });
});
