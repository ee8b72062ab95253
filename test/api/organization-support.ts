/**
 * Organizations for HTTP tests, provisioned the real way (POST /organizations
 * with an account key), so their streams exist and PATCH, archive and
 * restore work on them. Keys come from the pipeline's fixtures.
 */
import { expect } from 'chai';
import type { Plan } from '../../src/accounts/plans.ts';
import type { Scope } from '../../src/accounts/scopes.ts';
import { call, createAccount, createKey, type TestKey } from '../support/fixtures.ts';
import type { TestServer } from '../support/server.ts';

export { randomIce } from '../reservation/protocol.ts';

export interface AccountUnderTest {
  accountId: string;
  /** svc_acct_ key with the organizations:* scopes. */
  accountKey: TestKey;
}

export async function newAccount(server: TestServer, plan: Plan = 'professional'): Promise<AccountUnderTest> {
  const accountId = await createAccount(server.database.db, plan);
  const accountKey = await createKey(server.database.db, { accountId, bundle: 'full_access' });
  return { accountId, accountKey };
}

export async function provision(server: TestServer, account: AccountUnderTest, body: Record<string, unknown> = {}) {
  return call(`${server.url}/organizations`, account.accountKey.secret, { method: 'POST', body: { legal_name: 'Atlas Conseil SARL', ...body } });
}

export interface OrganizationUnderTest extends AccountUnderTest {
  organizationId: string;
  /** svc_test_ key of the organization (full_access unless scopes given). */
  key: TestKey;
}

export async function newOrganization(
  server: TestServer,
  o: { plan?: Plan; body?: Record<string, unknown>; scopes?: Scope[] } = {},
): Promise<OrganizationUnderTest> {
  const account = await newAccount(server, o.plan);
  const res = await provision(server, account, o.body);
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  const organizationId = res.body.data.id as string;
  const key = await createKey(server.database.db, { accountId: account.accountId, organizationId, scopes: o.scopes });
  return { ...account, organizationId, key };
}

export function expectError(res: { status: number; body: any }, status: number, code: string): any {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
  return res.body.error;
}

export const ORGANIZATION_FIELDS = [
  'id', 'legal_name', 'ice', 'rc', 'if_number', 'vat_number', 'phone', 'email', 'website',
  'billing_address', 'subscription', 'api_quotas', 'archived', 'archived_at', 'created_at', 'updated_at',
];
