/**
 * Accounts, organizations and keys for tests, written straight to the tables
 * (no HTTP, no plan checks). Pipeline tests only need the organizations read
 * model row; tests whose commands read the organization stream should
 * provision it through the organization handler instead and then call
 * createKey for it.
 */
import type { Kysely } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { createAccount as create, updateAccount } from '../../src/accounts/accounts.ts';
import { insertKey } from '../../src/accounts/keys.ts';
import { bundleScopes, type Bundle } from '../../src/accounts/scopes.ts';
import type { Plan } from '../../src/accounts/plans.ts';
import type { Scope } from '../../src/accounts/scopes.ts';

export interface AccountOptions {
  name?: string;
  subscription?: 'active' | 'expired';
  currentPeriodEnd?: string | null;
  requestsPerMinute?: number | null;
}

export async function createAccount(db: Kysely<any>, plan: Plan = 'professional', options: AccountOptions = {}): Promise<string> {
  const account = await create(db, {
    name: options.name ?? `Test account ${plan}`,
    plan,
    currentPeriodEnd: options.currentPeriodEnd ?? null,
    requestsPerMinute: options.requestsPerMinute ?? null,
  });
  if (options.subscription === 'expired') await updateAccount(db, account.id, { subscriptionStatus: 'expired' });
  return account.id;
}

export interface OrganizationRowOptions {
  id?: string;
  legalName?: string;
  ice?: string | null;
  archived?: boolean;
  apiEnabled?: boolean;
}

/** A row in the `organizations` read model only (no events). */
export async function insertOrganizationRow(db: Kysely<any>, accountId: string, o: OrganizationRowOptions = {}): Promise<string> {
  const id = o.id ?? uuidv7();
  const now = new Date().toISOString();
  await db
    .insertInto('organizations')
    .values({
      id,
      account_id: accountId,
      legal_name: o.legalName ?? 'Test SARL',
      ice: o.ice ?? null,
      billing_address: JSON.stringify({ street: null, city: null, postal_code: null, country: 'MA' }),
      api_enabled: o.apiEnabled ?? true,
      archived: o.archived ?? false,
      archived_at: o.archived ? now : null,
      created_at: now,
      updated_at: now,
      version: 0,
    })
    .execute();
  return id;
}

export interface KeyOptions {
  /** An organization key when set, else an account key of `accountId`. */
  organizationId?: string | null;
  accountId: string;
  mode?: 'test' | 'live';
  bundle?: Bundle;
  scopes?: readonly Scope[];
}

export interface TestKey {
  id: string;
  secret: string;
}

export async function createKey(db: Kysely<any>, o: KeyOptions): Promise<TestKey> {
  const kind = o.organizationId ? 'organization' : 'account';
  const scopes = o.scopes ?? bundleScopes(o.bundle ?? 'full_access', kind);
  const { key, secret } = await insertKey(db, { accountId: o.accountId, organizationId: o.organizationId ?? null, mode: o.mode, scopes });
  return { id: key.id, secret };
}

export interface Tenant {
  accountId: string;
  organizationId: string;
  key: TestKey;
}

/** Account + organization row + organization key in one call (defaults: professional, full_access). */
export async function createTenant(
  db: Kysely<any>,
  o: { plan?: Plan; account?: AccountOptions; organization?: OrganizationRowOptions; bundle?: Bundle; scopes?: readonly Scope[]; mode?: 'test' | 'live' } = {},
): Promise<Tenant> {
  const accountId = await createAccount(db, o.plan ?? 'professional', o.account);
  const organizationId = await insertOrganizationRow(db, accountId, o.organization);
  const key = await createKey(db, { accountId, organizationId, bundle: o.bundle, scopes: o.scopes, mode: o.mode });
  return { accountId, organizationId, key };
}

/** fetch with the key as Bearer token; JSON body when `body` is an object. */
export async function call(
  url: string,
  secret: string | null,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const headers: Record<string, string> = { ...init.headers };
  if (secret) headers.authorization = `Bearer ${secret}`;
  let body: string | undefined;
  if (init.body !== undefined) {
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url, { method: init.method ?? 'GET', headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: keep the text */
  }
  return { status: res.status, headers: res.headers, body: parsed };
}
