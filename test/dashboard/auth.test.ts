/**
 * Sign-in and its protections, in real Chromium against a real server:
 * the user CLI, argon2id hashes, cookie flags, CSRF, idle and absolute
 * session expiry, sign-out, disabled users, sign-in attempt limits, headers.
 */
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { ABSOLUTE_MS, COOKIE_NAME, IDLE_MS, SIGNIN_LIMITS, TOUCH_AFTER_MS } from '../../src/dashboard/security.ts';
import type { TestServer } from '../support/server.ts';
import { csrfOf, launchBrowser, newAccount, PASSWORD, screenshot, signedIn, signIn, startDashboardServer, type TestAccount } from './support.ts';

function admin(databaseUrl: string, args: string[], stdin: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', ...args], { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

describe('dashboard: users, sign-in, sessions', function () {
  this.timeout(120_000);
  let server: TestServer;
  let browser: Browser;
  let acct: TestAccount;

  before(async () => {
    server = await startDashboardServer();
    browser = await launchBrowser();
    acct = await newAccount(server);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('user create reads the password from stdin, stores an argon2id hash, and the user signs in; user disable signs them out', async function () {
    this.timeout(400_000); // seven CLI processes, each starting TypeScript and opening the database
    const url = server.database.url;
    const created = await admin(url, ['user', 'create', '--account', acct.accountId, '--email', 'Compta@Example.ma', '--role', 'admin', '--password-stdin', '--json'], `${PASSWORD}\n`);
    expect(created.code, created.stderr).to.equal(0);
    const { id } = JSON.parse(created.stdout);
    expect(Object.keys(JSON.parse(created.stdout))).to.deep.equal(['id']);
    const row = await server.database.db.selectFrom('dashboard_users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.password_hash).to.match(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(row.password_hash).not.to.include(PASSWORD);

    const noStdin = await admin(url, ['user', 'create', '--account', acct.accountId, '--email', 'x@example.ma', '--role', 'admin'], '');
    expect(noStdin.code).to.equal(2); // not run as given (docs/operations.md "Admin CLI")
    expect(noStdin.stderr).to.include('--password-stdin');
    const short = await admin(url, ['user', 'create', '--account', acct.accountId, '--email', 'y@example.ma', '--role', 'boss', '--password-stdin'], 'short\n');
    expect(short.code).to.equal(2); // refused values
    expect(short.stderr).to.include('role must be one of owner, admin, viewer').and.to.include('password must be at least 12 characters');
    const duplicate = await admin(url, ['user', 'create', '--account', acct.accountId, '--email', 'compta@example.ma', '--role', 'viewer', '--password-stdin'], PASSWORD);
    expect(duplicate.stderr).to.include('email already used');

    const listed = await admin(url, ['user', 'list', '--account', acct.accountId, '--json'], '');
    expect(JSON.parse(listed.stdout).map((u: any) => u.email)).to.include('Compta@Example.ma');

    // Email is matched case-insensitively.
    const { context, page } = await signedIn(browser, server.root, 'compta@example.ma');
    expect(page.url()).to.include(`/dashboard/o/${acct.organizationId}/keys`);
    const disabled = await admin(url, ['user', 'disable', id], '');
    expect(disabled.code, disabled.stderr).to.equal(0);
    await page.reload();
    expect(new URL(page.url()).pathname).to.equal('/dashboard/');
    expect(await page.locator("#password").count()).to.equal(1);
    await signIn(page, server.root, 'compta@example.ma');
    expect(await page.locator('.errors').textContent()).to.include('incorrect');
    await context.close();
  });

  it('sets the session cookie HttpOnly, SameSite=Lax, path /dashboard, 30 minutes idle, not Secure over plain HTTP; sign-out ends the session', async () => {
    const { context, page } = await signedIn(browser, server.root, acct.users.owner);
    const cookies = (await context.cookies()).filter((c) => c.name === COOKIE_NAME);
    expect(cookies).to.have.length(1);
    const [cookie] = cookies;
    expect(cookie.httpOnly).to.equal(true);
    expect(cookie.sameSite).to.equal('Lax');
    expect(cookie.path).to.equal('/dashboard');
    expect(cookie.secure).to.equal(false);
    expect(cookie.expires * 1000 - Date.now()).to.be.within(25 * 60_000, 31 * 60_000);
    // The value is only a signed id: the session lives in PostgreSQL.
    const sid = decodeURIComponent(cookie.value).slice(2).split('.')[0];
    const stored = await server.database.db.selectFrom('dashboard_sessions').select('sess').where('sid', '=', sid).executeTakeFirstOrThrow();
    expect(stored.sess.userId).to.be.a('string');

    await Promise.all([page.waitForLoadState('load'), page.click('form[action="/dashboard/sign-out"] button')]);
    expect(new URL(page.url()).pathname).to.equal('/dashboard/');
    expect(await server.database.db.selectFrom('dashboard_sessions').select('sid').where('sid', '=', sid).executeTakeFirst()).to.equal(undefined);
    const after = await page.goto(`${server.root}/dashboard/o/${acct.organizationId}/keys`);
    expect(new URL(after!.url()).pathname).to.equal('/dashboard/');
    await context.close();
  });

  it('moves the session row\'s idle expiry forward at most once a minute, not on every page', async () => {
    const { context, page } = await signedIn(browser, server.root, acct.users.owner);
    const sid = decodeURIComponent((await context.cookies()).find((c) => c.name === COOKIE_NAME)!.value).slice(2).split('.')[0];
    const rows = server.database.db.selectFrom('dashboard_sessions').select('expire').where('sid', '=', sid);
    const setExpire = (msFromNow: number) => server.database.db.updateTable('dashboard_sessions').set({ expire: new Date(Date.now() + msFromNow) }).where('sid', '=', sid).execute();
    const keys = `${server.root}/dashboard/o/${acct.organizationId}/keys`;
    // 20 seconds behind a fresh 30-minute expiry: a page view leaves the row alone.
    await setExpire(IDLE_MS - 20_000);
    const before = (await rows.executeTakeFirstOrThrow()).expire.getTime();
    expect((await page.goto(keys))!.status()).to.equal(200);
    expect((await rows.executeTakeFirstOrThrow()).expire.getTime()).to.equal(before);
    // More than a minute behind: the next page view moves it to 30 minutes from now.
    await setExpire(IDLE_MS - TOUCH_AFTER_MS - 5_000);
    const viewed = Date.now();
    expect((await page.goto(keys))!.status()).to.equal(200);
    expect((await rows.executeTakeFirstOrThrow()).expire.getTime()).to.be.within(viewed + IDLE_MS - 2_000, Date.now() + IDLE_MS + 2_000);
    await context.close();
  });

  it('refuses forms without a valid CSRF token (403 page, nothing changed)', async () => {
    const { context, page } = await signedIn(browser, server.root, acct.users.owner);
    const keysUrl = `${server.root}/dashboard/o/${acct.organizationId}/keys`;
    const count = async () => Number((await server.database.db.selectFrom('api_keys').select((eb) => eb.fn.countAll().as('n')).where('organization_id', '=', acct.organizationId).executeTakeFirstOrThrow()).n);
    const before = await count();
    for (const form of [{ bundle: 'read_only' } as Record<string, string>, { bundle: 'read_only', _csrf: 'forged' }, { bundle: 'read_only', _csrf: '' }]) {
      const res = await page.request.post(keysUrl, { form, maxRedirects: 0 });
      expect(res.status()).to.equal(403);
      expect(await res.text()).to.include('Formulaire expiré');
    }
    expect(await count()).to.equal(before);
    // With the page's token the same form works.
    const ok = await page.request.post(keysUrl, { form: { bundle: 'read_only', mode: 'test', _csrf: await csrfOf(page) }, maxRedirects: 0 });
    expect(ok.status()).to.equal(200);
    expect(await count()).to.equal(before + 1);
    // Sign-in itself needs the token too (login CSRF).
    const anonymous = await browser.newContext();
    const res = await anonymous.request.post(`${server.root}/dashboard/sign-in`, { form: { email: acct.users.owner, password: PASSWORD }, maxRedirects: 0 });
    expect(res.status()).to.equal(403);
    await anonymous.close();
    await context.close();
  });

  it('an idle-expired or absolutely-expired session leads back to sign-in, then to the page asked for', async () => {
    const { context, page } = await signedIn(browser, server.root, acct.users.admin);
    const target = `/dashboard/o/${acct.organizationId}/webhooks`;
    const sid = async () => decodeURIComponent((await context.cookies()).find((c) => c.name === COOKIE_NAME)!.value).slice(2).split('.')[0];
    // Idle: the row's expiry passed (30 minutes without a request).
    await server.database.db.updateTable('dashboard_sessions').set({ expire: new Date(Date.now() - 1000) }).where('sid', '=', await sid()).execute();
    await page.goto(`${server.root}${target}`);
    expect(new URL(page.url()).pathname).to.equal('/dashboard/');
    expect(await page.locator('.notice').textContent()).to.include('expiré');
    await screenshot(page, 'signin-expired');
    await page.fill('#email', acct.users.admin);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForLoadState('load'), page.click('form[action="/dashboard/sign-in"] button[type=submit]')]);
    expect(new URL(page.url()).pathname).to.equal(target);

    // Absolute: signed in more than 12 hours ago, however active since.
    const id = await sid();
    const row = await server.database.db.selectFrom('dashboard_sessions').select('sess').where('sid', '=', id).executeTakeFirstOrThrow();
    const sess = { ...row.sess, signedInAt: Date.now() - ABSOLUTE_MS - 1000 };
    await server.database.db.updateTable('dashboard_sessions').set({ sess: JSON.stringify(sess) }).where('sid', '=', id).execute();
    await page.goto(`${server.root}${target}`);
    expect(new URL(page.url()).pathname).to.equal('/dashboard/');
    await context.close();
  });

  it('limits wrong passwords per email: after 5 failures even the right password is refused (429) until the window ends', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const email = acct.users.viewer;
    for (let i = 0; i < SIGNIN_LIMITS.email.points; i++) {
      await signIn(page, server.root, email, `wrong password ${i}`);
      expect(await page.locator('.errors').textContent()).to.include('incorrect');
    }
    const response = page.waitForResponse((r) => r.url().endsWith('/dashboard/sign-in'));
    await signIn(page, server.root, email, PASSWORD);
    expect((await response).status()).to.equal(429);
    expect(await page.locator('.errors').textContent()).to.match(/Trop de tentatives.*Réessayez dans \d+ minutes/);
    await screenshot(page, 'signin-limited');
    // Another user from the same address is not locked out by it.
    await signIn(page, server.root, acct.users.owner);
    expect(page.url()).to.include('/dashboard/o/');
    // Once the window is over (here: its row expired), the right password works again.
    await server.database.db.updateTable('dashboard_signin_limits').set({ expire: Date.now() - 1 }).where('key', '=', `email:${email}`).execute();
    await context.clearCookies();
    await signIn(page, server.root, email);
    expect(page.url()).to.include('/dashboard/o/');
    await context.close();
  });

  it('sends a strict Content-Security-Policy and no-store on every page', async () => {
    const res = await fetch(`${server.root}/dashboard/`);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).to.include("default-src 'none'").and.to.include("script-src 'self'").and.to.include("frame-ancestors 'none'").and.to.include("form-action 'self'");
    expect(csp).not.to.include('unsafe-inline');
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(res.headers.get('referrer-policy')).to.equal('no-referrer');
    const html = await res.text();
    expect(html).not.to.match(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    expect(html).not.to.match(/\sstyle=/); // no inline style
  });
});
