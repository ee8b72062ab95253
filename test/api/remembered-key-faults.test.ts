/**
 * Writes on a remembered key (src/api/pipeline/remembered.ts) when things go wrong around them, each found by
 * an adversarial review: a group that waits on a lock in its apply() step, a refused condition's statement in
 * PostgreSQL's log. (A group whose COMMIT's answer is lost: test/eventstore/conditions.test.ts.)
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type pg from 'pg';
import { hashSecret } from '../../src/accounts/keys.ts';
import { callerCte } from '../../src/api/pipeline/authenticate.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { call } from '../support/fixtures.ts';
import { invoicesClient, line, type InvoicesClient } from '../invoices/support.ts';
import { until } from '../support/wait.ts';

const body = (customerId: string) => ({ customer_id: customerId, issue_date: '2026-03-14', items: [line()] });
const aCustomer = { name: 'Particulier', type: 'b2c', email: 'a@b.ma', phone: '+212522000000', address: { street: 'x', city: 'Rabat', postal_code: '10000' } };

describe('writes on a remembered key, around faults', function () {
  this.timeout(60_000);
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ env: { INLINE_PROJECTIONS: 'auto' }, roles: ['api', 'projector'] });
  });
  after(() => s?.stop());

  /**
   * Holds every draft count slot of the organization's March 2026 (a transaction of another process, say), so a
   * create waits in its write, and the creations sent meanwhile gather into one group behind it.
   */
  async function holdCounts(api: InvoicesClient): Promise<pg.PoolClient> {
    const m = await s.database.pool.connect();
    await m.query('begin');
    await m.query(
      `insert into invoice_issue_month_counts (organization_id, month, status, slot, invoices)
       select $1, '2026-03-01', 'draft', g, 0 from generate_series(0, 15) g
       on conflict (organization_id, month, status, slot) do update set invoices = invoice_issue_month_counts.invoices`,
      [api.tenant.organizationId],
    );
    return m;
  }
  const waitingOnLocks = async () =>
    Number((await s.database.pool.query(`select count(*) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rows[0].count);

  /**
   * A create on the remembered key sent with customers' creations, behind a lead create that waits on the
   * counts: it goes in a group with them (whose projector writes after the message: apply()) or alone, and waits
   * on the counts either way.
   */
  async function createBehindLead(api: InvoicesClient, customerId: string) {
    const lead = api.create(body(customerId), { 'idempotency-key': `lead-${randomUUID()}` }); // the normal way, waits on the counts
    await until(async () => (await waitingOnLocks()) > 0, 10_000, 'the lead create waiting on the counts', 5);
    const customers = Array.from({ length: 6 }, () => call(`${s.url}/customers`, api.secret, { method: 'POST', body: aCustomer }));
    const create = api.create(body(customerId));
    const more = Array.from({ length: 6 }, () => call(`${s.url}/customers`, api.secret, { method: 'POST', body: aCustomer }));
    return { lead, rest: Promise.all([...customers, ...more]), create };
  }

  // Where a group that writes after its message runs its conditions (with the COMMIT, after apply()): test/eventstore/conditions.test.ts.
  it("holds no key's count row while its create waits on another lock: no other request waits on it, no deadlock", async () => {
    const api = await invoicesClient(s);
    const customer = await api.customer();
    expect((await api.create(body(customer.id))).status).to.equal(201); // remembered
    const deadlocks = async () => Number((await s.database.pool.query('select deadlocks from pg_stat_database where datname = current_database()')).rows[0].deadlocks);
    const before = await deadlocks();
    const m = await holdCounts(api);
    const { lead, rest, create } = await createBehindLead(api, customer.id);
    await until(async () => (await waitingOnLocks()) > 1, 10_000, 'the create waiting on the counts', 5);
    // The create waits on the counts M holds: the key's count row is free, as for another process's lone
    // create, which takes the counts, then that row.
    const free = await s.database.pool.connect();
    try {
      await free.query('begin');
      const row = await free.query('select 1 from rate_limits where key = $1 for update skip locked', [`rl:${api.tenant.key.id}`]);
      expect(row.rows, "the key's count row is not held by the waiting group").to.have.length(1);
      await free.query('rollback');
    } finally {
      free.release();
    }
    await m.query('update rate_limits set points = points where key = $1', [`rl:${api.tenant.key.id}`]);
    await m.query('rollback');
    m.release();
    const answers = await Promise.all([create, lead, rest]);
    expect(answers[0].status).to.equal(201);
    expect(answers[1].status).to.equal(201);
    for (const c of answers[2]) expect(c.status).to.equal(201);
    expect(await deadlocks()).to.equal(before);
  });

  it("digests a key's row without its secret's hash: a logged digest confirms no guessed secret", async () => {
    const api = await invoicesClient(s);
    const digest = async () =>
      (await s.database.pool.query(`with ${callerCte('k.id = $1::uuid', true)} select caller_digest from caller`, [api.tenant.key.id])).rows[0].caller_digest;
    const before = await digest();
    expect(before).to.match(/^[0-9a-f]{64}$/);
    // Another secret's hash on the same row (never done by the service: a key's secret does not change).
    await s.database.pool.query(`update api_keys set secret_hash = $2 where id = $1`, [api.tenant.key.id, hashSecret(`${api.secret}x`)]);
    expect(await digest()).to.equal(before);
    await s.database.pool.query(`update api_keys set scopes = array['invoices:read'] where id = $1`, [api.tenant.key.id]);
    expect(await digest(), 'what the checks read is covered').not.to.equal(before);
  });

  it("writes no key's secret hash to PostgreSQL's log when a condition refuses", async function () {
    const api = await invoicesClient(s);
    const customer = await api.customer();
    expect((await api.create(body(customer.id))).status).to.equal(201); // remembered
    await s.database.pool.query('update api_keys set revoked_at = now() where id = $1', [api.tenant.key.id]);
    expect((await api.create(body(customer.id))).status).to.equal(401);
    if (process.env.DATABASE_URL) return this.skip(); // another server's log is not this run's to read
    // The embedded server logs to server.log in its data directory (src/db/embedded.ts).
    const file = path.join((await s.database.pool.query('show data_directory')).rows[0].data_directory as string, 'server.log');
    expect(existsSync(file), file).to.equal(true);
    const log = await readFile(file, 'utf8');
    expect(log, 'the refusal is logged').to.include('the key, its account or organization, or the customer changed');
    expect(log).not.to.include(hashSecret(api.secret));
  });
});
