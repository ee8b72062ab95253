/**
 * The dashboard's test bench: a real server (every role) on a fresh
 * database, accounts whose organizations are provisioned through the
 * organization commands (so invoices and their history work), users of each
 * role, and real Chromium through playwright-core (CHROMIUM_PATH, else
 * Debian's /usr/bin/chromium; .ci/run installs it).
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { v7 as uuidv7 } from 'uuid';
import { createAccount } from '../../src/accounts/accounts.ts';
import { PLAN_LIMITS, type Plan } from '../../src/accounts/plans.ts';
import { provisionOrganization } from '../../src/commands/organization/handler.ts';
import { createUser } from '../../src/dashboard/users.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

export const PASSWORD = 'correct horse battery staple';

export function chromiumPath(): string | null {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(Boolean) as string[];
  return candidates.find((p) => existsSync(p)) ?? null;
}

export async function launchBrowser(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('Chromium not found: set CHROMIUM_PATH or apt-get install chromium (.ci/run does)');
  return chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-dev-shm-usage'],
  });
}

/** A server with short webhook retries and local receivers allowed. */
export function startDashboardServer(): Promise<TestServer> {
  return startTestServer({ env: { WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_RETRY_DELAYS_MS: '150,150,150,150,150' } });
}

export interface TestAccount {
  accountId: string;
  organizationId: string;
  users: Record<'owner' | 'admin' | 'viewer', string>;
}

let counter = 0;

/** An account with one organization (provisioned by the command, as the dashboard does) and one user per role. */
export async function newAccount(server: TestServer, plan: Plan = 'professional', profile: { ice?: string } = {}): Promise<TestAccount> {
  const rt = server.server.runtime;
  const n = `${process.pid}-${++counter}-${Date.now().toString(36)}`;
  const account = await createAccount(rt.database.db, { name: `Dashboard test ${n}`, plan });
  const metadata = { organization_id: null, actor: 'system', request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date().toISOString() };
  const result = await provisionOrganization(
    { store: rt.store, metadata },
    { organization_id: uuidv7(), account_id: account.id, entity_cap: PLAN_LIMITS[plan].entityCap, profile: { legal_name: `Atlas ${n} SARL`, ...profile } },
  );
  await rt.progress.waitFor(result.position!, 10_000);
  const users = {} as TestAccount['users'];
  for (const role of ['owner', 'admin', 'viewer'] as const) {
    const email = `${role}-${n}@example.ma`;
    await createUser(rt.database.db, { accountId: account.id, email, role, password: PASSWORD });
    users[role] = email;
  }
  return { accountId: account.id, organizationId: result.state.organization!.id, users };
}

export async function signIn(page: Page, root: string, email: string, password = PASSWORD): Promise<void> {
  await page.goto(`${root}/dashboard`);
  await page.fill('#email', email);
  await page.fill('#password', password);
  await Promise.all([page.waitForLoadState('load'), page.click('form[action="/dashboard/sign-in"] button[type=submit]')]);
}

/** A fresh browser context (own cookies) signed in as `email`. */
export async function signedIn(browser: Browser, root: string, email: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await signIn(page, root, email);
  if (!page.url().includes('/dashboard/o/') && !page.url().endsWith('/dashboard/organizations')) throw new Error(`sign-in as ${email} failed: ${page.url()}`);
  return { context, page };
}

/** The CSRF token of the page (every page has one, in the sign-out and language forms). */
export function csrfOf(page: Page): Promise<string> {
  return page.locator('input[name=_csrf]').first().inputValue();
}

/** Saves a screenshot for docs/dashboard.md when DASHBOARD_SCREENSHOTS names a folder. */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.DASHBOARD_SCREENSHOTS;
  if (!dir) return;
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}
