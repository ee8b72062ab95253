/**
 * An account with one organization and a full-access API key, written
 * straight into a benchmark's database (the server under test only serves
 * requests; setting a tenant up is not what is measured).
 */
import { v7 as uuidv7 } from 'uuid';
import { createAccount } from '../../src/accounts/accounts.ts';
import { insertKey } from '../../src/accounts/keys.ts';
import { bundleScopes } from '../../src/accounts/scopes.ts';
import type { BenchDatabase } from './postgres.ts';

export interface Tenant {
  organizationId: string;
  secret: string;
}

export async function tenant(database: BenchDatabase, ice: string): Promise<Tenant> {
  const account = await createAccount(database.db, { name: 'Bench', plan: 'fiduciaire', requestsPerMinute: 100_000_000 });
  const organizationId = uuidv7();
  const now = new Date().toISOString();
  await database.db.insertInto('organizations').values({
    id: organizationId, account_id: account.id, legal_name: 'Bench SARL', ice, billing_address: JSON.stringify({ street: null, city: null, postal_code: null, country: 'MA' }),
    api_enabled: true, archived: false, created_at: now, updated_at: now, version: 0,
  }).execute();
  const { secret } = await insertKey(database.db, { accountId: account.id, organizationId, scopes: bundleScopes('full_access') });
  return { organizationId, secret };
}
