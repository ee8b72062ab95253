/** `npm run admin -- webhook ...` as child processes against a test database. */
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { runAdmin } from '../support/admin-cli.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { newOrganization, Receiver } from './support.ts';

const KEY = 'a'.repeat(64);

describe('admin CLI: webhook', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let receiver: Receiver;
  let org: string;

  const admin = (env: Record<string, string>, ...args: string[]) =>
    runAdmin(database.url, ['webhook', ...args], { WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_SECRET_KEY: KEY, ...env });
  async function json(...args: string[]) {
    const r = await admin({}, ...args, '--json');
    expect(r.code, r.stderr).to.equal(0);
    return JSON.parse(r.stdout);
  }
  /** Exit 2: not run as given (refused value, unknown id); 1: ran and failed (docs/operations.md "Admin CLI"). */
  async function failure(env: Record<string, string>, args: string[], pattern: RegExp, exit = 2) {
    const r = await admin(env, ...args);
    expect(r.code, r.stderr).to.equal(exit);
    expect(r.stderr.trim()).to.match(pattern);
    expect(r.stderr).not.to.match(/\n\s+at /);
    return r;
  }

  before(async () => {
    database = await freshDatabase();
    receiver = await new Receiver().start();
    org = await newOrganization(database.db);
  });
  after(async () => {
    await receiver.stop();
    await database.drop();
  });

  it('add prints the secret once; list, rotate-secret, test, deliveries and replay work on it', async () => {
    const added = await json('add', '--org', org, '--url', receiver.url(), '--events', 'invoice.paid,customer.created', '--convention', 'B');
    expect(added.secret).to.match(/^whsec_[0-9A-Za-z]{40}$/);
    expect(added).to.include({ organization_id: org, convention: 'B', url: receiver.url(), secret_hint: `whsec_...${added.secret.slice(-4)}` });
    expect(added.events).to.deep.equal(['invoice.paid', 'customer.created']);
    const row = await database.db.selectFrom('webhook_endpoints').selectAll().executeTakeFirstOrThrow();
    expect(row.secret).to.match(/^aes256gcm:/).and.not.contain(added.secret.slice(6)); // sealed with WEBHOOK_SECRET_KEY

    const listed = await admin({}, 'list', '--org', org, '--json');
    expect(listed.stdout).not.to.contain(added.secret.slice(6));
    expect(JSON.parse(listed.stdout).map((e: any) => e.id)).to.deep.equal([added.id]);

    const rotated = await json('rotate-secret', added.id);
    expect(rotated.secret).to.match(/^whsec_/).and.not.equal(added.secret);

    const tested = await json('test', added.id, '--event', 'invoice.paid');
    expect(tested).to.include({ event_type: 'invoice.paid', test: true, status: 'succeeded', status_code: 200 });
    const r = receiver.requests[0];
    expect(r.headers['x-service-delivery-id']).to.equal(tested.id);
    expect(r.headers['x-service-test']).to.equal('true'); // a receiver tells a sample from a real event
    const ts = String(r.headers['x-service-timestamp']);
    expect(r.headers['x-service-signature']).to.equal(createHmac('sha256', rotated.secret).update(`${ts}.`).update(r.body).digest('hex'));
    const body = JSON.parse(r.body.toString());
    expect(body).to.include({ type: 'invoice.paid', organization_id: org });
    expect(body.data).to.include({ status: 'paid', amount_due: '0.00' });

    const human = await admin({}, 'deliveries', '--org', org);
    expect(human.stdout).to.contain(tested.id).and.contain('invoice.paid (test)');
    expect((await json('deliveries', '--org', org, '--status', 'succeeded')).map((d: any) => d.id)).to.deep.equal([tested.id]);
    expect(await json('deliveries', '--org', org, '--status', 'failed')).to.deep.equal([]);

    const replayed = await json('replay', tested.id);
    expect(replayed).to.include({ id: tested.id, status: 'pending', attempt_count: 0 });
  });

  it('test against a failing receiver: the result on stdout, the error on stderr, exit 1', async () => {
    receiver.behavior = () => ({ status: 500 });
    const { id } = await json('add', '--org', org, '--url', receiver.url('/down'));
    const r = await admin({}, 'test', id, '--event', 'customer.deleted', '--json');
    expect(r.code, r.stderr).to.equal(1);
    expect(JSON.parse(r.stdout)).to.include({ status: 'failed', status_code: 500, attempt_count: 1 });
    // With --json the error is JSON too, on stderr.
    expect(JSON.parse(r.stderr).error).to.deep.equal({ code: 'TEST_EVENT_REFUSED', message: 'the endpoint did not accept the test event: HTTP 500' });
    await failure({}, ['test', id, '--event', 'customer.deleted'], /^error: the endpoint did not accept the test event: HTTP 500$/, 1);
    receiver.behavior = () => {};
  });

  it('clear errors, exit 2 for refused values and unknown ids, 1 for a failure', async () => {
    const secure = { WEBHOOK_ALLOW_INSECURE: 'false' };
    await failure(secure, ['add', '--org', org, '--url', receiver.url()], /^error: url: the URL must use https:\/\//);
    await failure(secure, ['add', '--org', org, '--url', 'https://127.0.0.1/hook'], /^error: url: 127\.0\.0\.1 is a loopback address/);
    await failure(secure, ['add', '--org', org, '--url', 'https://localhost/hook'], /^error: url: .* is a loopback address \(localhost resolves to/);
    await failure({}, ['add', '--org', org, '--url', receiver.url(), '--events', 'invoice.paid,schedule.created'], /^error: unknown event "schedule.created"/);
    await failure({}, ['add', '--org', org, '--url', receiver.url(), '--convention', 'C'], /^error: convention "C" is not A or B$/);
    await failure({}, ['add', '--org', '00000000-0000-4000-8000-000000000000', '--url', receiver.url()], /^error: organization .* not found$/);
    await failure({}, ['rotate-secret', 'nope'], /^error: endpoint nope not found/);
    await failure({}, ['replay', '00000000-0000-4000-8000-000000000000'], /^error: delivery .* not found$/);
    await failure({}, ['deliveries', '--org', org, '--status', 'lost'], /^error: status "lost" is not one of pending, succeeded, failed$/);
    await failure({}, ['test', '00000000-0000-4000-8000-000000000000', '--event', 'invoice.paid'], /^error: endpoint .* not found$/);
    const { id } = await json('add', '--org', org, '--url', receiver.url());
    await failure({}, ['test', id, '--event', 'invoice.canceled'], /^error: unknown event "invoice.canceled"/);
    await failure({ WEBHOOK_SECRET_KEY: '' }, ['test', id, '--event', 'invoice.paid'], /WEBHOOK_SECRET_KEY: is needed/, 1);
  });
});
