/**
 * First start of an empty test-mode database (docs/api-decisions.md "Operator interface"): create a
 * demo account, organization and full_access test key, and print the key once
 * with a curl example, so `npm start` is enough to try the API.
 *
 * "Empty" means no account at all: once anything exists (the demo, or an
 * operator's own accounts) it never runs again. Two processes starting at
 * once serialize on an advisory lock and the second sees the first's
 * account. Never in live mode. DEMO_BOOTSTRAP=false turns it off (the test
 * suite does, so test servers start clean).
 */
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { createAccount } from '../accounts/accounts.ts';
import { createApiKey } from '../accounts/keys.ts';
import { bundleScopes } from '../accounts/scopes.ts';
import { PLAN_LIMITS } from '../accounts/plans.ts';
import { systemMetadata } from '../commands/command.ts';
import { provisionOrganization } from '../commands/organization/handler.ts';
import { randomBase62 } from '../accounts/keys.ts';
import { createUser } from '../dashboard/users.ts';
import { catchUpProjections } from '../projections/catch-up.ts';
import type { Runtime } from '../runtime.ts';

const LOCK = 'demo-bootstrap';
const DEMO_PLAN = 'professional';

export const DEMO_ORGANIZATION = {
  legal_name: 'Atlas Démo SARL',
  ice: '001525417000071',
  rc: '123456', // the documents print it after their own "RC" label
  if_number: '40123456',
  email: 'contact@atlas-demo.ma',
  billing_address: { street: '1 Boulevard Zerktouni', city: 'Casablanca', postal_code: '20000', country: 'MA' },
};

export interface DemoData {
  accountId: string;
  organizationId: string;
  keyId: string;
  secret: string;
  /** The dashboard's demo owner (docs/dashboard.md); the password is printed once. */
  ownerEmail: string;
  ownerPassword: string;
}

export const DEMO_OWNER_EMAIL = 'demo@atlas-demo.ma';

function enabled(rt: Runtime): boolean {
  return rt.config.serviceMode === 'test' && rt.config.demoBootstrap;
}

/** Creates the demo data when the database has no account; null when it did nothing. */
export async function bootstrapDemo(rt: Runtime): Promise<DemoData | null> {
  const db = rt.database.db;
  // Cheap check first: every start of a non-empty database stops here without a lock.
  if (!enabled(rt) || (await sql`select 1 from accounts limit 1`.execute(db)).rows.length > 0) return null;
  const lock = await rt.database.pool.connect();
  try {
    await lock.query('select pg_advisory_lock(hashtext($1))', [LOCK]);
    if ((await sql`select 1 from accounts limit 1`.execute(db)).rows.length > 0) return null;
    const account = await createAccount(db, { name: 'Demo account', plan: DEMO_PLAN });
    const metadata = systemMetadata();
    const result = await provisionOrganization(
      { store: rt.store, metadata },
      { organization_id: uuidv7(), account_id: account.id, entity_cap: PLAN_LIMITS[DEMO_PLAN].entityCap, profile: DEMO_ORGANIZATION },
    );
    const organizationId = result.state.organization!.id;
    // The key references the organization's read-model row; the server's projectors are not running yet.
    await catchUpProjections(rt, result.position);
    const { key, secret } = await createApiKey(db, { organizationId }, { mode: 'test', scopes: bundleScopes('full_access'), name: 'Demo key' });
    const ownerPassword = randomBase62(20);
    await createUser(db, { accountId: account.id, email: DEMO_OWNER_EMAIL, role: 'owner', password: ownerPassword });
    return { accountId: account.id, organizationId, keyId: key.id, secret, ownerEmail: DEMO_OWNER_EMAIL, ownerPassword };
  } finally {
    await lock.query('select pg_advisory_unlock(hashtext($1))', [LOCK]).catch(() => {});
    lock.release();
  }
}

export function demoBanner(rt: Runtime, demo: DemoData): string {
  const root = `${rt.config.tlsCertFile ? 'https' : 'http'}://localhost:${rt.config.port}`;
  const base = `${root}/api/v1`;
  return [
    '',
    'Demo data created (first start of an empty test-mode database):',
    `  account        ${demo.accountId} (${DEMO_PLAN} plan)`,
    `  organization   ${demo.organizationId} ${DEMO_ORGANIZATION.legal_name}, ICE ${DEMO_ORGANIZATION.ice}`,
    `  API key        ${demo.secret}`,
    '                 (full_access, test mode; shown this once only: copy it now)',
    '',
    'Try it:',
    `  curl -H "Authorization: Bearer ${demo.secret}" ${base}/organization`,
    '',
    `Dashboard: ${root}/dashboard`,
    `  email          ${demo.ownerEmail}`,
    `  password       ${demo.ownerPassword}`,
    '                 (owner of the demo account; shown this once only)',
    '',
  ].join('\n');
}

/** The start-up hook (listed in src/main.ts). */
export async function demoStartupHook(rt: Runtime): Promise<void> {
  const demo = await bootstrapDemo(rt);
  if (!demo) return;
  rt.logger.info({ account_id: demo.accountId, organization_id: demo.organizationId, key_id: demo.keyId }, 'demo data created');
  // To the terminal (stderr), not into the JSON log stream on stdout: the key is shown this once.
  process.stderr.write(`${demoBanner(rt, demo)}\n`);
}
