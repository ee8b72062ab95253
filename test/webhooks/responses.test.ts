/**
 * Receivers that misbehave: never answering, garbage, huge or endless
 * bodies, redirects, not speaking HTTP at all; and a slow receiver next to a
 * healthy one. None of them may stall a sender.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { expect } from 'chai';
import { startHarness, type Harness } from './harness.ts';
import { appendInvoice, newEndpoint, newOrganization, Receiver, until } from './support.ts';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

describe('webhooks: misbehaving receivers', () => {
  let h: Harness;
  const servers: (http.Server | net.Server)[] = [];
  const receivers: Receiver[] = [];
  beforeEach(async () => (h = await startHarness({ timeoutMs: 400, retryDelaysMs: [60_000] })));
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.stop()));
    for (const s of servers.splice(0)) {
      (s as http.Server).closeAllConnections?.();
      s.close();
    }
    await h.stop();
  });

  async function serve(handler: Handler): Promise<string> {
    const server = http.createServer((req, res) => req.resume().on('end', () => handler(req, res)));
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  }

  /** One event to one endpoint at `url`; resolves with its first attempt. */
  async function firstAttempt(url: string) {
    const org = await newOrganization(h.t.db);
    await newEndpoint(h.t.db, org, url, 'A');
    const started = Date.now();
    await appendInvoice(h.store, org);
    const row = () => h.t.db.selectFrom('webhook_attempts').selectAll().executeTakeFirst();
    await until(async () => (await row()) !== undefined, 10_000);
    const attempt = (await row())!;
    const d = await h.t.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
    return { attempt, delivery: d, elapsed: Date.now() - started };
  }

  it('a receiver that never answers fails after the (shortened) timeout and is retried later', async () => {
    const { attempt, delivery } = await firstAttempt(await serve(() => {}));
    expect(attempt.status_code).to.equal(null);
    expect(attempt.error).to.equal('timeout: no response within 400 ms');
    expect(attempt.duration_ms).to.be.within(390, 1500);
    expect(delivery).to.include({ status: 'pending', attempt_count: 1 });
  });

  it('garbage body with NUL bytes: the status decides; the excerpt is kept without NULs', async () => {
    const { attempt, delivery } = await firstAttempt(await serve((_q, res) => res.end(Buffer.from([0, 0xff, 0xfe, 0x41, 0, 0x42]))));
    expect(attempt.status_code).to.equal(200);
    expect(attempt.response_excerpt).to.equal('\ufffd\ufffdAB');
    expect(delivery.status).to.equal('succeeded');
  });

  it('a 5 MB body: read no further than 64 KiB, 1 KiB kept', async () => {
    const { attempt, delivery, elapsed } = await firstAttempt(await serve((_q, res) => res.end('x'.repeat(5_000_000))));
    expect(attempt.response_excerpt).to.equal('x'.repeat(1024));
    expect(delivery.status).to.equal('succeeded');
    expect(elapsed).to.be.below(3000);
  });

  it('an endless streamed body does not hold the sender', async () => {
    const url = await serve((_q, res) => {
      res.writeHead(200);
      const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write('y'.repeat(16_384))), 5);
    });
    const { attempt, delivery } = await firstAttempt(url);
    expect(attempt.duration_ms).to.be.below(400);
    expect(attempt.response_excerpt).to.have.length(1024);
    expect(delivery.status).to.equal('succeeded');
  });

  it('a 2xx whose body trickles past the deadline still counts (the status came in time)', async () => {
    const url = await serve((_q, res) => {
      res.writeHead(202);
      res.write('slow');
    });
    const { attempt, delivery } = await firstAttempt(url);
    expect(attempt).to.include({ status_code: 202, error: null, response_excerpt: 'slow' });
    expect(delivery.status).to.equal('succeeded');
  });

  it('a redirect is a failure and is not followed', async () => {
    const target = new Receiver();
    receivers.push(await target.start());
    const { attempt, delivery } = await firstAttempt(await serve((_q, res) => res.writeHead(302, { location: target.url('/internal') }).end()));
    expect(attempt.status_code).to.equal(302);
    expect(attempt.error).to.equal(`redirect not followed (302 to ${target.url('/internal')})`);
    expect(delivery.status).to.equal('pending');
    expect(target.requests).to.have.length(0);
  });

  it('a server that does not speak HTTP: failure with the parse error', async () => {
    const server = net.createServer((socket) => socket.end('garbage\r\n\r\n'));
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { attempt } = await firstAttempt(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    expect(attempt.status_code).to.equal(null);
    expect(attempt.error, String(attempt.error)).to.match(/HPE_|Parse Error|socket hang up|ECONNRESET|EPIPE/i);
  });

  it('connection refused: failure, recorded, retried later', async () => {
    const r = new Receiver();
    await r.start();
    const url = r.url();
    await r.stop();
    const { attempt, delivery } = await firstAttempt(url);
    expect(attempt.error).to.match(/ECONNREFUSED/);
    expect(delivery).to.include({ status: 'pending', attempt_count: 1 });
  });

  it('a slow receiver does not block a healthy one', async () => {
    const slow = new Receiver();
    const fast = new Receiver();
    receivers.push(await slow.start(), await fast.start());
    slow.behavior = () => ({ hang: true });
    await h.senders[0].stop();
    h.addSender({ timeoutMs: 10_000 }); // the slow receiver's attempts stay in flight for the whole test
    const org = await newOrganization(h.t.db);
    await newEndpoint(h.t.db, org, slow.url(), 'A');
    await newEndpoint(h.t.db, org, fast.url(), 'B');
    for (let i = 0; i < 20; i++) await appendInvoice(h.store, org, ['InvoiceCreated', 'InvoicePaid']);
    await until(() => fast.requests.length === 40, 5000, 'all 40 deliveries to the healthy receiver');
    expect(slow.requests.length).to.be.at.most(8); // its share of the slots, no more
  });
});
