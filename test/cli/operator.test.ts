/**
 * The admin CLI as operators and scripts use it (docs/operations.md "Admin
 * CLI"): validation errors with their field details, JSON errors on stderr
 * with --json, exit codes (2: not run as given, 1: failed), unknown ids as
 * errors, and the list/show/enable/disable/remove commands.
 */
import { expect } from 'chai';
import { randomIce } from '../reservation/protocol.ts';
import { createAccount, createKey, insertOrganizationRow } from '../support/fixtures.ts';
import { runAdmin, type CliResult } from '../support/admin-cli.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';

const UNKNOWN = '0190b4a1-0000-7000-8000-000000000000';

describe('admin CLI: errors, exit codes, lists', function () {
  this.timeout(180_000);
  let database: TestDatabase;
  const admin = (...args: string[]): Promise<CliResult> => runAdmin(database.url, args, { WEBHOOK_ALLOW_INSECURE: 'true' });
  async function json(...args: string[]): Promise<any> {
    const r = await admin(...args, '--json');
    expect(r.code, r.stderr).to.equal(0);
    return JSON.parse(r.stdout);
  }
  /** With --json: nothing on stdout, one JSON document on stderr. */
  async function jsonError(args: string[], exit: number): Promise<{ code: string; message: string; details?: any }> {
    const r = await admin(...args, '--json');
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(exit);
    expect(r.stdout).to.equal('');
    expect(r.stderr.trim().split('\n')).to.have.length(1);
    return JSON.parse(r.stderr).error;
  }

  before(async () => {
    database = await freshDatabase();
  });
  after(() => database?.drop());

  it('a refused value names its field and says what is wrong; --json gives the details as JSON on stderr; exit 2', async () => {
    const accountId = await createAccount(database.db, 'professional');
    const human = await admin('org', 'create', '--account', accountId, '--legal-name', 'Atlas SARL', '--ice', '123');
    expect(human.code, human.stderr).to.equal(2);
    expect(human.stdout).to.equal('');
    expect(human.stderr.trim().split('\n')).to.have.length(1);
    expect(human.stderr).to.match(/^error: .*ice: .*15 digits/);

    const error = await jsonError(['org', 'create', '--account', accountId, '--legal-name', 'Atlas SARL', '--ice', '123', '--email', 'not-an-email'], 2);
    expect(error.code).to.equal('VALIDATION_ERROR');
    const fields = error.details.fields.map((f: any) => f.field);
    expect(fields).to.include.members(['ice', 'email']); // every field at once
    for (const f of error.details.fields) expect(f.message).to.be.a('string').and.not.equal('');
  });

  it('usage errors (a missing or unknown flag) are JSON too with --json, exit 2', async () => {
    const missing = await jsonError(['account', 'create', '--plan', 'starter'], 2);
    expect(missing).to.include({ code: 'USAGE_ERROR' });
    expect(missing.message).to.match(/required option '--name <name>'/);
    const unknown = await jsonError(['account', 'list', '--colour', 'red'], 2);
    expect(unknown.message).to.match(/unknown option '--colour'/);
    const human = await admin('account', 'create', '--plan', 'starter');
    expect(human.code).to.equal(2);
    expect(human.stderr).to.match(/required option '--name <name>'/);
  });

  it('an unknown organization or account is an error (exit 2, NOT_FOUND), never an empty list', async function () {
    this.timeout(600_000); // a dozen CLI processes, slow on a loaded machine
    for (const args of [
      ['key', 'list', '--org', UNKNOWN],
      ['key', 'list', '--account', UNKNOWN],
      ['key', 'list', '--org', 'nope'],
      ['webhook', 'list', '--org', UNKNOWN],
      ['webhook', 'deliveries', '--org', UNKNOWN],
      ['user', 'list', '--account', UNKNOWN],
      ['org', 'list', '--account', UNKNOWN],
      ['org', 'show', UNKNOWN],
    ]) {
      const error = await jsonError(args, 2);
      expect(error.code, args.join(' ')).to.equal('NOT_FOUND');
      expect(error.message).to.match(/^(organization|account) .* not found$/);
    }
    for (const args of [['key', 'list', '--org', UNKNOWN], ['user', 'list', '--account', UNKNOWN]]) {
      const human = await admin(...args);
      expect(human.code).to.equal(2);
      expect(human.stdout).to.equal('');
      expect(human.stderr).to.match(/^error: (organization|account) .* not found\n$/);
    }
  });

  it('a command that runs and fails exits 1 (plan limit), with its code in JSON', async () => {
    const starter = await createAccount(database.db, 'starter');
    const org = await insertOrganizationRow(database.db, starter);
    const error = await jsonError(['key', 'create', '--org', org, '--bundle', 'full_access'], 1);
    expect(error.code).to.be.a('string').and.match(/^[A-Z_]+$/);
    expect(error.message).to.match(/starter plan has no API access/);
  });

  it('account list, org list and org show (the whole organization)', async () => {
    const accountId = await createAccount(database.db, 'fiduciaire');
    const ice = randomIce();
    const org = await json('org', 'create', '--account', accountId, '--legal-name', 'Atlas Show SARL', '--ice', ice, '--rc', 'RC 42', '--city', 'Rabat', '--email', 'show@atlas.ma');
    await createKey(database.db, { accountId, organizationId: org.id });

    const accounts = await json('account', 'list');
    expect(accounts.map((a: any) => a.id)).to.include(accountId);
    expect(accounts.find((a: any) => a.id === accountId)).to.include({ plan: 'fiduciaire' });
    expect((await json('account', 'list', '--plan', 'starter')).every((a: any) => a.plan === 'starter')).to.equal(true);

    const orgs = await json('org', 'list', '--account', accountId);
    expect(orgs).to.have.length(1);
    expect(orgs[0]).to.include({ id: org.id, legal_name: 'Atlas Show SARL', ice, api_enabled: true, archived: false });

    const shown = await json('org', 'show', org.id);
    expect(shown).to.include({ id: org.id, account_id: accountId, legal_name: 'Atlas Show SARL', ice, rc: 'RC 42', email: 'show@atlas.ma', api_enabled: true, archived: false });
    expect(shown.billing_address).to.include({ city: 'Rabat', country: 'MA' });
    expect(shown.subscription).to.include({ plan: 'fiduciaire', status: 'active' });
    expect(shown.api_quotas).to.include({ api_keys_used: 1, api_keys_limit: null });
    for (const k of ['if_number', 'vat_number', 'phone', 'website', 'created_at', 'updated_at', 'version']) expect(shown).to.have.property(k);
    const human = await admin('org', 'show', org.id);
    expect(human.stdout).to.match(/billing address:\s+Rabat, MA/).and.match(/api keys:\s+1 of unlimited/).and.match(/rc:\s+RC 42/);
  });

  it('webhook disable, enable and remove', async () => {
    const accountId = await createAccount(database.db, 'professional');
    const org = await insertOrganizationRow(database.db, accountId);
    const added = await json('webhook', 'add', '--org', org, '--url', 'http://127.0.0.1:9/hook');
    expect((await json('webhook', 'disable', added.id)).enabled).to.equal(false);
    expect((await json('webhook', 'list', '--org', org))[0].enabled).to.equal(false);
    expect((await json('webhook', 'enable', added.id)).enabled).to.equal(true);
    expect(await json('webhook', 'remove', added.id)).to.deep.equal({ id: added.id, removed: true });
    expect(await json('webhook', 'list', '--org', org)).to.deep.equal([]);
    const gone = await jsonError(['webhook', 'remove', added.id], 2);
    expect(gone.code).to.equal('NOT_FOUND');
  });
});
