/**
 * API keys (docs/api-decisions.md "Keys, plans and quotas"): `svc_live_` / `svc_test_` / `svc_acct_`
 * followed by 43 base62 characters (256 bits from crypto.randomBytes). Only
 * the SHA-256 of a secret is stored; the secret is shown once, at creation.
 * There is no lookup cache, so a revocation holds from the next request on.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { PLAN_LIMITS, type Plan } from './plans.ts';
import type { Scope } from './scopes.ts';
import { DomainError } from '../shared/errors.ts';
import { checkUuid } from './accounts.ts';
import type { Database } from '../db/schema.ts';

export type KeyMode = 'test' | 'live' | 'account';
export type KeyKind = 'organization' | 'account';

const PREFIX: Record<KeyMode, string> = { test: 'svc_test_', live: 'svc_live_', account: 'svc_acct_' };
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_CHARS = 43; // 62^43 > 2^256
const SECRET_FORMAT = /^svc_(test|live|acct)_[0-9A-Za-z]{32,128}$/;

/** Uniform base62: bytes >= 248 (4 x 62) are rejected, so no character is favoured. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

export function generateSecret(mode: KeyMode): string {
  return PREFIX[mode] + randomBase62(SECRET_CHARS);
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time equality of two hex SHA-256 digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === 32 && y.length === 32 && timingSafeEqual(x, y);
}

/** The mode a well-formed secret claims by its prefix, or null when malformed. */
export function modeOfSecret(secret: string): KeyMode | null {
  const m = SECRET_FORMAT.exec(secret);
  if (!m) return null;
  return m[1] === 'acct' ? 'account' : (m[1] as 'test' | 'live');
}

export interface ApiKeyRecord {
  id: string;
  account_id: string;
  organization_id: string | null;
  kind: KeyKind;
  mode: KeyMode;
  prefix: string;
  last4: string;
  scopes: Scope[];
  name: string | null;
  created_at: Date;
  revoked_at: Date | null;
}

const PUBLIC_COLUMNS = ['id', 'account_id', 'organization_id', 'kind', 'mode', 'prefix', 'last4', 'scopes', 'name', 'created_at', 'revoked_at'] as const;

export interface NewKey {
  accountId: string;
  organizationId: string | null;
  /** 'test' or 'live' for organization keys; ignored for account keys. */
  mode?: 'test' | 'live';
  scopes: readonly Scope[];
  name?: string | null;
}

/** Inserts a key without checking plan limits (tests, and createApiKey after its checks). */
export async function insertKey(db: Kysely<Database>, input: NewKey): Promise<{ key: ApiKeyRecord; secret: string }> {
  const kind: KeyKind = input.organizationId ? 'organization' : 'account';
  const mode: KeyMode = kind === 'account' ? 'account' : (input.mode ?? 'test');
  const secret = generateSecret(mode);
  const key = await db
    .insertInto('api_keys')
    .values({
      id: uuidv7(),
      account_id: input.accountId,
      organization_id: input.organizationId,
      kind,
      mode,
      prefix: PREFIX[mode],
      last4: secret.slice(-4),
      secret_hash: hashSecret(secret),
      scopes: [...input.scopes],
      name: input.name ?? null,
    })
    .returning(PUBLIC_COLUMNS)
    .executeTakeFirstOrThrow();
  return { key: key as ApiKeyRecord, secret };
}

export type KeyOwner = { organizationId: string } | { accountId: string };

/**
 * Creates a key for an organization or an account, within the plan: no key
 * for a starter account, at most the plan's number of active keys per
 * organization. The account row is locked so two creations cannot both take
 * the last free slot.
 */
export async function createApiKey(
  db: Kysely<Database>,
  owner: KeyOwner,
  options: { mode?: 'test' | 'live'; scopes: readonly Scope[]; name?: string | null },
): Promise<{ key: ApiKeyRecord; secret: string }> {
  return db.transaction().execute(async (trx) => {
    let accountId: string;
    let organizationId: string | null = null;
    if ('organizationId' in owner) {
      organizationId = checkUuid(owner.organizationId, 'organization');
      const org = await trx.selectFrom('organizations').select(['account_id']).where('id', '=', organizationId).executeTakeFirst();
      if (!org) throw new DomainError('NOT_FOUND', `organization ${owner.organizationId} not found`);
      accountId = org.account_id;
    } else {
      accountId = checkUuid(owner.accountId, 'account');
    }
    const account = await trx.selectFrom('accounts').select(['plan']).where('id', '=', accountId).forUpdate().executeTakeFirst();
    if (!account) throw new DomainError('NOT_FOUND', `account ${accountId} not found`);
    const limits = PLAN_LIMITS[account.plan as Plan];
    if (!limits.api) throw new DomainError('API_TIER_NOT_SUPPORTED', `the ${account.plan} plan has no API access; change the plan first`);
    if (organizationId && limits.apiKeysLimit !== null) {
      const { n } = await trx
        .selectFrom('api_keys')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('organization_id', '=', organizationId)
        .where('revoked_at', 'is', null)
        .executeTakeFirstOrThrow();
      if (Number(n) >= limits.apiKeysLimit) {
        // Over the limit after a plan downgrade: say both numbers, not the count as if it were the limit.
        const limit = `the ${account.plan} plan allows ${limits.apiKeysLimit}`;
        throw new DomainError('QUOTA_EXCEEDED', `the organization already has ${n} active keys; ${limit}`, { limit: limits.apiKeysLimit });
      }
    }
    return insertKey(trx, { accountId, organizationId, mode: options.mode, scopes: options.scopes, name: options.name });
  });
}

export async function listKeys(db: Kysely<Database>, owner: KeyOwner): Promise<ApiKeyRecord[]> {
  let q = db.selectFrom('api_keys').select(PUBLIC_COLUMNS).orderBy('created_at').orderBy('id');
  q = 'organizationId' in owner
    ? q.where('organization_id', '=', checkUuid(owner.organizationId, 'organization'))
    : q.where('account_id', '=', checkUuid(owner.accountId, 'account')).where('kind', '=', 'account');
  return (await q.execute()) as ApiKeyRecord[];
}

/** Revokes a key (revoking it again keeps the first revocation time). */
export async function revokeKey(db: Kysely<Database>, id: string): Promise<ApiKeyRecord> {
  const key = await db
    .updateTable('api_keys')
    .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.fn<Date>('now')) }))
    .where('id', '=', checkUuid(id, 'key'))
    .returning(PUBLIC_COLUMNS)
    .executeTakeFirst();
  if (!key) throw new DomainError('NOT_FOUND', `key ${id} not found`);
  return key as ApiKeyRecord;
}
