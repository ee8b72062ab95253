/**
 * Served over TLS (TLS_CERT_FILE, TLS_KEY_FILE), the session cookie is also
 * Secure (docs/dashboard.md "Sessions"): a browser never sends it over plain
 * HTTP. The certificate is a throwaway self-signed one made by openssl for
 * this test.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { COOKIE_NAME } from '../../src/dashboard/security.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { launchBrowser, newAccount, signIn, type TestAccount } from './support.ts';

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('dashboard over TLS', function () {
  this.timeout(120_000);
  let dir = '';
  let server: TestServer;
  let browser: Browser;
  let acct: TestAccount;

  before(async function () {
    if (!hasOpenssl()) {
      console.log('      skipped: openssl is not installed (it makes the test certificate)');
      this.skip();
    }
    dir = await mkdtemp(path.join(tmpdir(), 'invoicing-tls-'));
    const [cert, key] = [path.join(dir, 'cert.pem'), path.join(dir, 'key.pem')];
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-keyout', key, '-out', cert], { stdio: 'ignore' });
    server = await startTestServer({ env: { TLS_CERT_FILE: cert, TLS_KEY_FILE: key } });
    browser = await launchBrowser();
    acct = await newAccount(server);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('serves https and sets the session cookie Secure, HttpOnly, SameSite=Lax', async () => {
    expect(server.root).to.match(/^https:\/\//);
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    try {
      const page = await context.newPage();
      const setCookies: string[] = [];
      page.on('response', async (res) => {
        const header = (await res.headersArray()).filter((h) => h.name.toLowerCase() === 'set-cookie');
        setCookies.push(...header.map((h) => h.value));
      });
      await signIn(page, server.root, acct.users.owner);
      expect(page.url()).to.include('/dashboard/o/');
      const [cookie] = (await context.cookies()).filter((c) => c.name === COOKIE_NAME);
      expect(cookie, 'the session cookie').to.not.equal(undefined);
      expect({ secure: cookie.secure, httpOnly: cookie.httpOnly, sameSite: cookie.sameSite }).to.deep.equal({ secure: true, httpOnly: true, sameSite: 'Lax' });
      const session = setCookies.find((c) => c.startsWith(`${COOKIE_NAME}=`));
      expect(session, 'a Set-Cookie for the session').to.be.a('string');
      expect(session!.split(';').map((p) => p.trim().toLowerCase())).to.include('secure');
    } finally {
      await context.close();
    }
  });
});
