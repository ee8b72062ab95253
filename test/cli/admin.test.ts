/** The admin CLI as a child process against a test database (DATABASE_URL). */
import { expect } from 'chai';
import { hashSecret } from '../../src/accounts/keys.ts';
import { createAccount, createKey, insertOrganizationRow } from '../support/fixtures.ts';
import { runAdmin, type CliResult as Result } from '../support/admin-cli.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';


describe('admin CLI', function () {
  this.timeout(120_000);
  let database: TestDatabase;

  const admin = (...args: string[]): Promise<Result> => runAdmin(database.url, args);

  async function json(...args: string[]): Promise<any> {
    const r = await admin(...args, '--json');
    expect(r.code, r.stderr).to.equal(0);
    return JSON.parse(r.stdout); // exactly one JSON document
  }

  /** Exit 2: the command was not run as given (usage, validation, unknown id); 1: it ran and failed. */
  function expectFailure(r: Result, pattern: RegExp, exit = 2) {
    expect(r.code).to.equal(exit);
    expect(r.stdout).to.equal('');
    expect(r.stderr.trim().split('\n')[0]).to.match(pattern);
    expect(r.stderr).not.to.match(/\n\s+at /); // no stack trace
  }

  before(async () => {
    database = await freshDatabase();
  });
  after(() => database?.drop());

  it('account create and update', async () => {
    const created = await json('account', 'create', '--name', 'Fiduciaire Atlas', '--plan', 'professional', '--expires', '2030-12-31');
    expect(created.id).to.match(/^[0-9a-f-]{36}$/);
    expect(created).to.include({ plan: 'professional', subscription_status: 'active', current_period_end: '2030-12-31' });
    const updated = await json('account', 'update', created.id, '--plan', 'fiduciaire', '--subscription', 'expired');
    expect(updated).to.include({ id: created.id, plan: 'fiduciaire', subscription_status: 'expired' });
    const row = await database.db.selectFrom('accounts').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row).to.include({ plan: 'fiduciaire', subscription_status: 'expired' });
  });

  it('key create, list (no secrets), revoke', async () => {
    const accountId = await createAccount(database.db, 'professional');
    const org = await insertOrganizationRow(database.db, accountId);
    const created = await json('key', 'create', '--org', org, '--bundle', 'read_only');
    expect(created.secret).to.match(/^svc_test_[0-9A-Za-z]{43}$/);
    expect(created.scopes).to.deep.equal(['invoices:read', 'recurring:read', 'customers:read', 'organization:read', 'webhooks:read']);
    const row = await database.db.selectFrom('api_keys').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row.secret_hash).to.equal(hashSecret(created.secret));

    const live = await json('key', 'create', '--org', org, '--mode', 'live', '--scopes', 'invoices:read,invoices:write');
    expect(live.secret).to.match(/^svc_live_/);
    const acct = await json('key', 'create', '--account', accountId, '--scopes', 'organizations:read');
    expect(acct.secret).to.match(/^svc_acct_/);

    const list = await admin('key', 'list', '--org', org, '--json');
    expect(list.stdout).not.to.contain(created.secret.slice(9));
    const keys = JSON.parse(list.stdout);
    expect(keys.map((k: any) => k.id)).to.deep.equal([created.id, live.id]);
    expect(keys[0]).to.not.have.property('secret');
    expect(keys[0].display).to.equal(`svc_test_...${created.secret.slice(-4)}`);

    const revoked = await json('key', 'revoke', created.id);
    expect(revoked.status).to.equal('revoked');
    const human = await admin('key', 'list', '--org', org);
    expect(human.stdout).to.match(new RegExp(`${created.id}.*revoked`));
  });

  it('human output shows the secret once, with a warning', async () => {
    const accountId = await createAccount(database.db, 'fiduciaire');
    const r = await admin('key', 'create', '--account', accountId, '--bundle', 'full_access');
    expect(r.code).to.equal(0);
    expect(r.stdout).to.match(/not shown again/);
    expect(r.stdout).to.match(/svc_acct_[0-9A-Za-z]{43}/);
  });

  it('enforces plan limits: no key on starter, 10 active keys on professional', async () => {
    const starter = await createAccount(database.db, 'starter');
    const starterOrg = await insertOrganizationRow(database.db, starter);
    expectFailure(await admin('key', 'create', '--org', starterOrg, '--bundle', 'full_access'), /^error: the starter plan has no API access/, 1);
    const pro = await createAccount(database.db, 'professional');
    const org = await insertOrganizationRow(database.db, pro);
    for (let i = 0; i < 10; i++) await createKey(database.db, { accountId: pro, organizationId: org });
    expectFailure(await admin('key', 'create', '--org', org, '--bundle', 'full_access'), /^error: the organization already has 10 active keys; the professional plan allows 10$/, 1);
    // Above the limit after a downgrade: the count and the limit, each the right number.
    await createKey(database.db, { accountId: pro, organizationId: org });
    expectFailure(await admin('key', 'create', '--org', org, '--bundle', 'full_access'), /^error: the organization already has 11 active keys; the professional plan allows 10$/, 1);
  });

  it('clear one-line errors; exit 2 when the command cannot run as given', async () => {
    expectFailure(await admin('account', 'create', '--name', 'X', '--plan', 'gold'), /^error: "gold" is not a plan/);
    expectFailure(await admin('key', 'revoke', 'nope'), /^error: key nope not found/);
    expectFailure(await admin('key', 'create', '--org', '0190b4a1-0000-7000-8000-000000000000', '--scopes', 'invoices:raed'), /^error: unknown scope "invoices:raed"/);
    expectFailure(await admin('key', 'create', '--org', '0190b4a1-0000-7000-8000-000000000000', '--bundle', 'full_access'), /^error: organization .* not found/);
    const bad = await admin('account', 'create', '--plan', 'starter');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/required option '--name <name>'/);
  });

  it('projections status and rebuild', async () => {
    const status = await json('projections', 'status');
    expect(status).to.be.an('array');
    for (const s of status) expect(s).to.have.keys(['name', 'position', 'head', 'lag_events', 'lag_ms', 'failed_event_id', 'error', 'updated_at']);
    const rebuilt = await json('projections', 'rebuild');
    expect(rebuilt.map((r: any) => r.projector)).to.deep.equal(status.map((s: any) => s.name));
    expectFailure(await admin('projections', 'rebuild', 'nope'), /^error: no projector named "nope"/);
  });
});
