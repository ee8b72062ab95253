/**
 * `analyst create` and what the login can do, with a real second login
 * (pg.Client on the printed connection string) against a server's database
 * holding two organizations' invoices.
 */
import { expect } from 'chai';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { businessToday } from '../../src/commands/schedule/calendar.ts';
import { runAdmin } from '../support/admin-cli.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { invoicesClient, type InvoicesClient } from '../invoices/support.ts';

describe('analyst logins', function () {
  this.timeout(300_000);
  let t: TestServer;
  let mine: InvoicesClient;
  let other: InvoicesClient;
  let login: { organization_id: string; role: string; connection_string: string };
  let client: pg.Client;

  before(async () => {
    t = await startTestServer();
    mine = await invoicesClient(t);
    other = await invoicesClient(t);
    for (const api of [mine, other]) {
      const c = await api.customer();
      await api.finalized(c.id);
      await api.finalized(c.id);
    }
    await other.finalized((await other.customer()).id);
    const r = await runAdmin(t.database.url, ['analyst', 'create', '--org', mine.tenant.organizationId, '--json']);
    expect(r.code, r.stderr).to.equal(0);
    login = JSON.parse(r.stdout);
    client = new pg.Client(login.connection_string);
    await client.connect();
  });
  after(async () => {
    await client?.end().catch(() => {});
    await t?.stop();
  });

  async function denied(query: string, code = '42501'): Promise<void> {
    let error: any;
    try {
      await client.query(query);
    } catch (err) {
      error = err;
    }
    expect(error, `${query} should fail`).to.be.instanceOf(Error);
    expect(error.code, `${query}: ${error.message}`).to.equal(code);
  }

  it('prints a postgresql:// connection string for this server and database, and the role', function () {
    const url = new URL(login.connection_string);
    const server = new URL(t.database.url);
    expect(url.protocol).to.equal('postgresql:');
    expect(url.host).to.equal(server.host);
    expect(url.pathname).to.equal(server.pathname);
    expect(url.username).to.equal(login.role).and.match(/^analyst_[0-9a-f]{32}_[0-9a-f]{8}$/);
    expect(url.password).to.have.length.greaterThan(30);
    expect(login.organization_id).to.equal(mine.tenant.organizationId);
  });

  it('reads the views and tables without a schema prefix, only its organization\'s rows', async function () {
    const org = mine.tenant.organizationId;
    const register = await client.query('select organization_id, sequence from invoice_register');
    expect(register.rows).to.deep.equal([
      { organization_id: org, sequence: 1 },
      { organization_id: org, sequence: 2 },
    ]);
    for (const table of ['invoices', 'invoice_lines', 'invoice_tax_breakdown', 'invoice_numbers', 'customers', 'vat_by_period', 'customer_statement', 'receivables_aging']) {
      const { rows } = await client.query(`select distinct organization_id from ${table}`);
      expect(rows, table).to.deep.equal([{ organization_id: org }]);
    }
    // The views' calendar (migration 0108): the offsets table and its functions, which run with the analyst's rights.
    const day = () => businessToday(new Date());
    const before = day();
    const { rows: calendar } = await client.query('select business_today()::text as today, business_date(now())::text as now, (select count(*)::int from business_utc_offsets) as offsets');
    expect([before, day()]).to.include(calendar[0].today);
    expect(calendar[0].now).to.equal(calendar[0].today);
    expect(calendar[0].offsets).to.be.greaterThan(0);
    const foreign = await client.query('select count(*)::int as n from invoices where organization_id = $1', [other.tenant.organizationId]);
    expect(foreign.rows[0].n).to.equal(0);
    // The service's own login still sees both.
    const { rows } = await t.database.pool.query('select count(distinct organization_id)::int as n from invoices');
    expect(rows[0].n).to.be.at.least(2);
  });

  it('cannot write anything, nor read secrets, the event log or other tables', async function () {
    await denied(`update invoices set total = 0`, '25006'); // read-only transaction by default
    await client.query('set default_transaction_read_only = off');
    await denied(`update invoices set total = 0`);
    await denied(`delete from customers`);
    await denied(`insert into invoice_numbers (organization_id, year, sequence, number, invoice_id, assigned_at) values ('${uuidv7()}', 2026, 99, 'x', '${uuidv7()}', now())`);
    await denied('create table mine (x int)');
    for (const table of ['api_keys', 'accounts', 'organizations', 'webhook_endpoints', 'webhook_deliveries', 'dashboard_users', 'dashboard_sessions', 'es_events', 'es_streams', 'idempotency_keys', 'projection_checkpoints']) {
      await denied(`select * from ${table} limit 1`);
    }
    await denied(`select * from es_append('invoice-x', -1, array['${uuidv7()}']::uuid[], '{T}', '{"{}"}', '{"{}"}', '{00}')`);
    // Becoming the group role it belongs to gives no more: the policy then matches no organization.
    await client.query('set role invoicing_analyst');
    try {
      expect((await client.query('select count(*)::int as n from invoices')).rows[0].n).to.equal(0);
      await denied('select * from api_keys limit 1');
    } finally {
      await client.query('reset role');
    }
  });

  it('can reach no SECURITY DEFINER function, and no schema but public', async function () {
    const { rows } = await client.query(`
      select p.oid::regprocedure::text as fn from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where p.prosecdef and n.nspname not in ('pg_catalog', 'information_schema') and has_function_privilege(p.oid, 'execute')`);
    expect(rows).to.deep.equal([]);
    const schemas = await client.query(`
      select nspname from pg_namespace where has_schema_privilege(oid, 'usage')
      and nspname not in ('pg_catalog', 'information_schema') and nspname not like 'pg_temp%' and nspname not like 'pg_toast%'`);
    expect(schemas.rows.map((r) => r.nspname)).to.deep.equal(['public']);
  });

  it('a wrong password is refused', async function () {
    const url = new URL(login.connection_string);
    url.password = 'wrong';
    const c = new pg.Client(url.toString());
    let error: any;
    await c.connect().catch((err) => (error = err));
    await c.end().catch(() => {});
    expect(error?.code).to.equal('28P01');
  });

  it('bad input: one line and exit code 2', async function () {
    for (const [args, message] of [
      [['--org', 'x'], /^error: --org "x" is not a UUID$/],
      [['--org', uuidv7()], /^error: no organization /],
      [[], /^error: --org is required$/],
    ] as const) {
      const r = await runAdmin(t.database.url, ['analyst', 'create', ...args]);
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stdout).to.equal('');
      expect(r.stderr.trim()).to.match(message);
    }
  });
});
