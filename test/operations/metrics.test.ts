/**
 * GET /metrics (Prometheus text, prom-client) and the access log
 * on a real server: counters and histograms per route template and status,
 * the scrape-time gauges, no ids in labels, and one access line per request
 * with what an operator needs (docs/operations.md).
 */
import net from 'node:net';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { loadConfig } from '../../src/config.ts';
import { freePort } from '../../src/db/embedded.ts';
import { processParts } from '../../src/main.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { call, createTenant, type Tenant } from '../support/fixtures.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { until } from '../support/wait.ts';

/** The value of one sample (`name{labels} value`), 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const inside = line.match(/^[^{ ]+\{(.*)\} /)?.[1] ?? '';
    if (Object.entries(labels).every(([k, v]) => inside.includes(`${k}="${v}"`))) return Number(line.split(' ').at(-1));
  }
  return 0;
}

describe('operations: /metrics and the access log', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let server: RunningServer;
  let root: string;
  let tenant: Tenant;
  const lines: any[] = [];

  before(async () => {
    database = await freshDatabase();
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        done();
      },
    });
    const config = loadConfig({ DATABASE_URL: database.url, PORT: '0', DEMO_BOOTSTRAP: 'false' });
    server = await startServer(config, createLogger('debug', sink), ['api', 'projector', 'webhooks'], processParts);
    root = server.url!.replace(/\/api\/v1$/, '');
    tenant = await createTenant(database.db);
  });
  after(async () => {
    await server?.stop();
    await database?.drop();
  });

  const scrape = async () => {
    const res = await fetch(`${root}/metrics`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    return res.text();
  };

  it('counts requests and their latency per route template and status; ids never become labels', async () => {
    const before = await scrape();
    const route = { method: 'GET', route: '/api/v1/customers/:id', status: '404' };
    const list = { method: 'GET', route: '/api/v1/customers', status: '200' };
    const missing = '0190b4a1-0000-7000-8000-000000000000';
    for (let i = 0; i < 3; i++) expect((await call(`${server.url}/customers/${missing}`, tenant.key.secret)).status).to.equal(404);
    expect((await call(`${server.url}/customers?per_page=5`, tenant.key.secret)).status).to.equal(200);
    expect((await call(`${root}/no/such/${missing}`, null)).status).to.equal(404);
    const created = await call(`${server.url}/customers`, tenant.key.secret, { method: 'POST', body: { name: 'Metrics SARL', type: 'b2c' } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);

    const after = await scrape();
    expect(sample(after, 'http_requests_total', route) - sample(before, 'http_requests_total', route)).to.equal(3);
    expect(sample(after, 'http_requests_total', list) - sample(before, 'http_requests_total', list)).to.equal(1);
    expect(sample(after, 'http_request_duration_seconds_count', route) - sample(before, 'http_request_duration_seconds_count', route)).to.equal(3);
    expect(sample(after, 'http_request_duration_seconds_bucket', { ...route, le: '+Inf' })).to.be.at.least(3);
    expect(sample(after, 'http_requests_total', { route: 'unmatched', status: '404' })).to.be.at.least(1);
    expect(sample(after, 'http_requests_total', { method: 'POST', route: '/api/v1/customers', status: '201' })).to.be.at.least(1);
    expect(after).not.to.contain(missing); // a path's id is never a label value
    expect(after).not.to.contain(tenant.organizationId);

    // The write appended to the event store: its latency is observed.
    const appends = { store: 'postgres', result: 'ok' };
    expect(sample(after, 'eventstore_append_duration_seconds_count', appends) - sample(before, 'eventstore_append_duration_seconds_count', appends)).to.be.at.least(1);
  });

  it('observes every append, those of a create on a remembered key too (src/api/pipeline/remembered.ts)', async () => {
    const customer = await call(`${server.url}/customers`, tenant.key.secret, { method: 'POST', body: { name: 'Metrics Client SARL', type: 'b2c' } });
    expect(customer.status).to.equal(201);
    const invoice = { customer_id: customer.body.data.id, issue_date: '2026-03-14', items: [{ description: 'Audit', quantity: 1, unit_price: '100', tax_rate: 20 }] };
    const appends = { store: 'postgres', result: 'ok' };
    const before = sample(await scrape(), 'eventstore_append_duration_seconds_count', appends);
    // The first reads the key with the customer (then remembered), the second runs on them.
    for (let i = 0; i < 2; i++) expect((await call(`${server.url}/invoices`, tenant.key.secret, { method: 'POST', body: invoice })).status).to.equal(201);
    expect(sample(await scrape(), 'eventstore_append_duration_seconds_count', appends) - before).to.equal(2);
  });

  it('reads projector lag, webhook queue depth, pool use and database state at each scrape', async () => {
    const text = await scrape();
    for (const p of processParts.projectors) {
      expect(text).to.match(new RegExp(`^projector_lag_events\\{projector="${p.name}"\\} -?\\d+`, 'm'));
      expect(text).to.match(new RegExp(`^projector_lag_seconds\\{projector="${p.name}"\\} [\\d.e-]+`, 'm'));
      expect(sample(text, 'projector_failing', { projector: p.name })).to.equal(0);
    }
    expect(text).to.match(/^webhook_deliveries_pending\{state="due"\} \d+/m);
    expect(text).to.match(/^webhook_deliveries_pending\{state="scheduled"\} \d+/m);
    expect(text).to.match(/^# TYPE webhook_attempts_total counter/m);
    expect(sample(text, 'db_pool_connections', { state: 'total' })).to.be.greaterThan(0);
    expect(sample(text, 'db_pool_max_connections')).to.equal(30);
    expect(sample(text, 'database_up')).to.equal(1);
    expect(text).to.match(/^process_resident_memory_bytes \d+/m); // prom-client's process metrics
  });

  it('logs one access line per request: route template, full path and query, status, duration, client address, request id, key id', async () => {
    const res = await fetch(`${server.url}/customers?per_page=7&order=asc`, { headers: { authorization: `Bearer ${tenant.key.secret}`, 'x-request-id': 'trace-42' } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-request-id')).to.equal('trace-42');
    await until(() => lines.some((l) => l.request_id === 'trace-42' && l.status === 200), 5000, 'the access line');
    const line = lines.find((l) => l.request_id === 'trace-42' && l.status === 200);
    expect(line).to.include({ level: 30, method: 'GET', route: '/api/v1/customers', url: '/api/v1/customers?per_page=7&order=asc', key_id: tenant.key.id });
    expect(line.ms).to.be.a('number');
    expect(line.remote_address).to.match(/127\.0\.0\.1|::1/);
    expect(JSON.stringify(line)).not.to.contain(tenant.key.secret);
    expect(line).not.to.have.property('req'); // no headers (keys, cookies) in the log

    // Without a usable X-Request-Id the server mints one: a UUID v7, like every id it mints.
    const minted = await fetch(`${server.url}/customers`, { headers: { authorization: `Bearer ${tenant.key.secret}`, 'x-request-id': 'not sane!' } });
    expect(minted.headers.get('x-request-id')).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('a client that hangs up before its answer still gets its line, marked aborted, and is not counted as an answer', async () => {
    const before = await scrape();
    // Headers announce a body that never comes whole; the socket is closed mid-body.
    const url = new URL(`${server.url}/customers`);
    const socket = net.connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${tenant.key.secret}\r\nX-Request-Id: gone-1\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name": "Hal',
    );
    socket.end(); // the server reads the headers and the partial body, then the end of the stream
    await until(() => lines.some((l) => l.request_id === 'gone-1'), 5000, 'the aborted request\'s line');
    const line = lines.find((l) => l.request_id === 'gone-1');
    expect(line, JSON.stringify(line)).to.include({ method: 'POST', url: '/api/v1/customers', aborted: true, status: null }); // route: unmatched, the body never came whole
    const after = await scrape();
    // Every POST series (any route, `unmatched` included: the body never came whole), summed: the aborted request is in none.
    const posts = (text: string) =>
      text.split('\n').filter((l) => l.startsWith('http_requests_total{') && l.includes('method="POST"'))
        .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
    expect(posts(after)).to.equal(posts(before));
  });

  it('logs health probes and scrapes at debug, not info', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const res = await fetch(`${root}${path}`, { headers: { 'x-request-id': `probe${path.replace('/', '-')}` } });
      expect(res.status).to.be.oneOf([200, 503]);
    }
    await until(() => lines.filter((l) => String(l.request_id).startsWith('probe-')).length === 3, 5000, 'the probe lines');
    for (const l of lines.filter((l) => String(l.request_id).startsWith('probe-'))) expect(l.level, l.route).to.equal(20);
  });

  it('METRICS_PORT serves /metrics on its own port only', async () => {
    const port = await freePort();
    const db = await freshDatabase();
    const other = await startServer(loadConfig({ DATABASE_URL: db.url, PORT: '0', METRICS_PORT: String(port), DEMO_BOOTSTRAP: 'false' }), createLogger('silent'), ['api'], processParts);
    try {
      expect(other.metricsUrl).to.equal(`http://localhost:${port}/metrics`);
      const own = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(own.status).to.equal(200);
      expect(await own.text()).to.match(/^http_requests_total/m);
      expect((await fetch(other.url!.replace(/\/api\/v1$/, '/metrics'))).status).to.equal(404);
    } finally {
      await other.stop();
      await db.drop();
    }
  });
});
