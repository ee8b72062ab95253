/** `npm run admin -- org ...` as an operator runs it: a separate process on the same database, no server running. */
import { expect } from 'chai';
import { randomIce } from '../reservation/protocol.ts';
import { createAccount } from '../support/fixtures.ts';
import { runAdmin } from '../support/admin-cli.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';

describe('admin CLI: org', function () {
  this.timeout(120_000);
  let database: TestDatabase;

  const admin = (...args: string[]) => runAdmin(database.url, args);

  before(async function () {
    database = await freshDatabase();
  });
  after(() => database?.drop());

  it('creates an organization that a key can be made for at once, then switches its API off and on', async function () {
    const accountId = await createAccount(database.db, 'professional');
    const ice = randomIce();
    const created = await admin('org', 'create', '--account', accountId, '--legal-name', 'Atlas SARL', '--ice', ice, '--city', 'Casablanca', '--json');
    expect(created.code, created.stderr).to.equal(0);
    const org = JSON.parse(created.stdout);
    expect(org).to.include({ account_id: accountId, legal_name: 'Atlas SARL', ice, api_enabled: true, archived: false });

    const row = await database.db.selectFrom('organizations').selectAll().where('id', '=', org.id).executeTakeFirstOrThrow();
    expect(row.billing_address).to.deep.equal({ street: null, city: 'Casablanca', postal_code: null, country: 'MA' });
    const key = await admin('key', 'create', '--org', org.id, '--bundle', 'full_access', '--json');
    expect(key.code, key.stderr + key.stdout).to.equal(0);
    expect(JSON.parse(key.stdout).secret).to.match(/^svc_test_/);

    const off = await admin('org', 'update', org.id, '--api', 'disabled', '--json');
    expect(off.code, off.stderr).to.equal(0);
    expect(JSON.parse(off.stdout).api_enabled).to.equal(false);
    const stored = await database.db.selectFrom('organizations').select('api_enabled').where('id', '=', org.id).executeTakeFirstOrThrow();
    expect(stored.api_enabled).to.equal(false);
    expect(JSON.parse((await admin('org', 'update', org.id, '--api', 'enabled', '--json')).stdout).api_enabled).to.equal(true);

    const duplicate = await admin('org', 'create', '--account', accountId, '--legal-name', 'Copy', '--ice', ice);
    expect(duplicate.code).to.equal(2); // a refused value: VALIDATION_ERROR
    expect(duplicate.stderr).to.match(/already used/);
  });

  it('release-ice frees an ICE its organization named once, never the one it names now', async function () {
    const accountId = await createAccount(database.db, 'professional');
    const [mistaken, right] = [randomIce(), randomIce()];
    const org = JSON.parse((await admin('org', 'create', '--account', accountId, '--legal-name', 'Atlas SARL', '--ice', mistaken, '--json')).stdout);
    const inUse = await admin('org', 'release-ice', mistaken, '--json');
    expect(inUse.code, inUse.stderr).to.equal(1);
    expect(JSON.parse(inUse.stderr).error).to.include({ code: 'ICE_IN_USE' });
    expect((await admin('org', 'update', org.id, '--ice', right)).code).to.equal(0);
    // Replaced, the ICE stays the organization's: nobody else can take it...
    expect((await admin('org', 'create', '--account', accountId, '--legal-name', 'Rightful', '--ice', mistaken)).stderr).to.match(/already used/);
    // ...until the operator frees it.
    const released = await admin('org', 'release-ice', mistaken, '--json');
    expect(released.code, released.stderr).to.equal(0);
    expect(JSON.parse(released.stdout)).to.deep.equal({ ice: mistaken, released_from: org.id });
    const rightful = await admin('org', 'create', '--account', accountId, '--legal-name', 'Rightful', '--ice', mistaken, '--json');
    expect(rightful.code, rightful.stderr).to.equal(0);
    const again = await admin('org', 'release-ice', randomIce());
    expect(again.code).to.equal(1);
    expect(again.stderr).to.match(/is not reserved/);
    const bad = await admin('org', 'release-ice', '12345');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/not an ICE/);
  });

  it('answers operator mistakes in one line', async function () {
    const cases: [string[], RegExp][] = [
      [['org', 'create', '--account', '0190b4a1-0000-7000-8000-000000000000', '--legal-name', 'X'], /account .* not found/],
      [['org', 'update', 'nope', '--api', 'enabled'], /organization nope not found/],
      [['org', 'update', '0190b4a1-0000-7000-8000-000000000000', '--api', 'maybe'], /not enabled or disabled/],
    ];
    for (const [args, message] of cases) {
      const res = await admin(...args);
      expect(res.code, args.join(' ')).to.equal(2);
      expect(res.stderr.trim().split('\n')).to.have.length(1);
      expect(res.stderr).to.match(message);
    }
  });
});
