/**
 * `projections verify` as an operator runs it (child process) against a
 * server that keeps serving writes meanwhile: 0 differences on a varied
 * workload, and exactly the row edited (or deleted) by hand otherwise.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { runAdmin } from '../support/admin-cli.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { createAccount, createKey } from '../support/fixtures.ts';
import { newIce } from '../customers/support.ts';
import { bindClient, line, type InvoicesClient } from '../invoices/support.ts';

describe('projections verify', function () {
  this.timeout(600_000);
  let t: TestServer;
  let api: InvoicesClient;
  let invoiceIds: string[] = [];

  before(async () => {
    t = await startTestServer();
    // The organization is provisioned through its events (org create), as in production: a row
    // inserted by a fixture would rightly show as a difference.
    const accountId = await createAccount(t.database.db, 'fiduciaire', { requestsPerMinute: 1_000_000 });
    const created = await runAdmin(t.database.url, ['org', 'create', '--account', accountId, '--legal-name', 'Atlas Conseil SARL', '--ice', newIce(), '--json']);
    expect(created.code, created.stderr).to.equal(0);
    const organizationId = JSON.parse(created.stdout).id;
    const key = await createKey(t.database.db, { accountId, organizationId, bundle: 'full_access' });
    api = bindClient(t.url, { accountId, organizationId, key });
    const customer = await api.customer();
    const other = await api.customer({ name: 'Société Fès SARL' });
    const a = await api.finalized(customer.id, { items: [line('Audit', 3, 1250.5, 20), line('Frais', 1, 10, 10)] });
    const b = await api.finalized(other.id);
    const c = await api.finalized(customer.id);
    expect((await api.action(a.id, 'pay', { payment_method: 'virement' })).status).to.equal(200);
    expect((await api.action(b.id, 'void', { reason: 'Erreur de client' })).status).to.equal(200);
    expect((await api.action(c.id, 'send')).status).to.equal(200);
    const d = await api.draft(customer.id);
    expect((await api.patch(d.id, { notes: 'modifiée' })).status).to.equal(200);
    invoiceIds = [a.id, b.id, c.id, d.id];
  });
  after(() => t?.stop());

  it('reports 0 differences for every projector, while the server keeps taking writes', async function () {
    const customer = await api.customer({ name: 'Client pendant la vérification' });
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        await api.finalized(customer.id);
        written++;
      }
    })();
    const r = await runAdmin(t.database.url, ['projections', 'verify', '--json']);
    writing = false;
    await writer;
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    const results = JSON.parse(r.stdout);
    expect(results.map((x: any) => x.projector)).to.include.members(['invoices', 'customers', 'organizations']);
    for (const x of results) expect(x.differences_count, `${x.projector}: ${JSON.stringify(x.differences)}`).to.equal(0);
    expect(results.find((x: any) => x.projector === 'invoices').rows.invoices).to.be.at.least(4);
    expect(written).to.be.greaterThan(0);
  });

  it('names the row and column edited by hand, with both values; exit code 1', async function () {
    const [a] = invoiceIds;
    const { rows } = await sql<{ total: string }>`select total::text as total from invoices where id = ${a}`.execute(t.database.db);
    await sql`update invoices set total = total + 1 where id = ${a}`.execute(t.database.db);
    try {
      const r = await runAdmin(t.database.url, ['projections', 'verify', 'invoices', '--json']);
      expect(r.code).to.equal(1);
      const [result] = JSON.parse(r.stdout);
      expect(result.differences_count).to.equal(1);
      const [d] = result.differences;
      expect(d).to.deep.include({ table: 'invoices', key: { id: a }, column: 'total' });
      expect(Number(d.live)).to.equal(Number(rows[0].total) + 1);
      expect(Number(d.rebuilt)).to.equal(Number(rows[0].total));
      // With --json the error is JSON on stderr too (docs/operations.md "Admin CLI").
      expect(JSON.parse(r.stderr)).to.deep.equal({ error: { code: 'VERIFICATION_FAILED', message: '1 differences between the live read models and a rebuild from the log' } });
      const humanOut = await runAdmin(t.database.url, ['projections', 'verify', 'invoices']);
      expect(humanOut.code).to.equal(1);
      expect(humanOut.stderr.trim()).to.equal('error: 1 differences between the live read models and a rebuild from the log');
      expect(humanOut.stdout).to.match(/^invoices: 1 differences at /).and.match(new RegExp(`invoices\\s+\\{"id":"${a}"\\}\\s+total\\s+`));
    } finally {
      await sql`update invoices set total = total - 1 where id = ${a}`.execute(t.database.db);
    }
  });

  it('reports a row deleted by hand as missing', async function () {
    const { rows } = await sql<any>`select * from customers order by created_at limit 1`.execute(t.database.db);
    const victim = rows[0];
    await sql`delete from customers where id = ${victim.id}`.execute(t.database.db);
    const r = await runAdmin(t.database.url, ['projections', 'verify', 'customers', '--json']);
    expect(r.code).to.equal(1);
    const [result] = JSON.parse(r.stdout);
    expect(result.differences).to.deep.equal([{ table: 'customers', key: { id: victim.id }, column: '(row)', live: 'missing', rebuilt: 'present' }]);
  });

  it('bad input: an unknown projector is one line and exit code 2', async function () {
    const r = await runAdmin(t.database.url, ['projections', 'verify', 'nope']);
    expect(r.code).to.equal(2);
    expect(r.stdout).to.equal('');
    expect(r.stderr.trim()).to.match(/^error: no projector named "nope" \(known: .*invoices.*\)$/);
  });
});
