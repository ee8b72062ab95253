/**
 * Dashboard users (docs/api-decisions.md "Dashboard"): people who sign in to an account's
 * dashboard, each with a role. One module for the admin CLI (`user create`,
 * `user list`, `user disable`) and the dashboard's own Users page.
 *
 * Passwords are hashed with argon2id (@node-rs/argon2, prebuilt binaries):
 * 19 MiB of memory, 2 passes, 1 lane (the OWASP minimum for argon2id), a
 * random 16-byte salt per hash; the PHC string keeps the parameters, so they
 * can be raised later and old hashes still verify.
 */
import { hash, verify } from '@node-rs/argon2';
import type { Kysely } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { Account } from '../accounts/accounts.ts';
import { isUuid } from '../shared/ids.ts';
import { v7 as uuidv7 } from 'uuid';
import { checkUuid } from '../accounts/accounts.ts';
import { DomainError } from '../shared/errors.ts';
import type { Database } from '../db/schema.ts';

export const ROLES = ['owner', 'admin', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const HASH_OPTIONS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;
export const PASSWORD_MIN = 12;
const PASSWORD_MAX = 256;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface DashboardUser {
  id: string;
  account_id: string;
  email: string;
  role: Role;
  disabled_at: Date | null;
  last_sign_in_at: Date | null;
  created_at: Date;
}

const COLUMNS = ['id', 'account_id', 'email', 'role', 'disabled_at', 'last_sign_in_at', 'created_at'] as const;

export function isRole(value: unknown): value is Role {
  return (ROLES as readonly unknown[]).includes(value);
}

/** The problems of a new user's fields, all at once (field -> message). */
export function checkNewUser(input: { email: string; role: string; password: string }): { field: string; message: string }[] {
  const errors: { field: string; message: string }[] = [];
  const email = input.email.trim();
  if (!EMAIL.test(email) || email.length > 254) errors.push({ field: 'email', message: 'must be an email address' });
  if (!isRole(input.role)) errors.push({ field: 'role', message: `must be one of ${ROLES.join(', ')}` });
  if (input.password.length < PASSWORD_MIN) errors.push({ field: 'password', message: `must be at least ${PASSWORD_MIN} characters` });
  if (input.password.length > PASSWORD_MAX) errors.push({ field: 'password', message: `must be at most ${PASSWORD_MAX} characters` });
  return errors;
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, HASH_OPTIONS);
}

export async function createUser(
  db: Kysely<Database>,
  input: { accountId: string; email: string; role: string; password: string },
): Promise<DashboardUser> {
  const errors = checkNewUser(input);
  if (errors.length) throw new DomainError('VALIDATION_ERROR', errors.map((e) => `${e.field} ${e.message}`).join('; '), { fields: errors });
  const accountId = checkUuid(input.accountId, 'account');
  const account = await db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  if (!account) throw new DomainError('NOT_FOUND', `account ${input.accountId} not found`);
  const passwordHash = await hashPassword(input.password);
  try {
    return (await db
      .insertInto('dashboard_users')
      .values({ id: uuidv7(), account_id: accountId, email: input.email.trim(), role: input.role as Role, password_hash: passwordHash })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow()) as DashboardUser;
  } catch (err: any) {
    if (err?.code === '23505') {
      const fields = [{ field: 'email', message: 'already used' }];
      throw new DomainError('VALIDATION_ERROR', 'email already used', { fields });
    }
    throw err;
  }
}

export async function listUsers(db: Kysely<Database>, accountId: string): Promise<DashboardUser[]> {
  return (await db
    .selectFrom('dashboard_users')
    .select(COLUMNS)
    .where('account_id', '=', checkUuid(accountId, 'account'))
    .orderBy('created_at')
    .orderBy('id')
    .execute()) as DashboardUser[];
}

export async function getUser(db: Kysely<Database>, id: string): Promise<DashboardUser | null> {
  const row = await db.selectFrom('dashboard_users').select(COLUMNS).where('id', '=', checkUuid(id, 'user')).executeTakeFirst();
  return (row as DashboardUser | undefined) ?? null;
}

/** An organization as the header's switcher lists it (and as pages name the selected one). */
export interface OrganizationChoice {
  id: string;
  legal_name: string;
  archived: boolean;
}

export interface SignedIn {
  user: DashboardUser;
  account: Account;
  /** The account's organizations, oldest first. */
  organizations: OrganizationChoice[];
}

/**
 * What every signed-in request needs, in one query instead of three: the
 * user, their account and the account's organizations (the switcher, and
 * the check that a URL's organization is the account's).
 */
export async function signedInUser(db: Kysely<Database>, userId: string): Promise<SignedIn | null> {
  if (!isUuid(userId)) return null;
  const row = await db
    .selectFrom('dashboard_users as u')
    .innerJoin('accounts as a', 'a.id', 'u.account_id')
    .select(['u.id', 'u.account_id', 'u.email', 'u.role', 'u.disabled_at', 'u.last_sign_in_at', 'u.created_at'])
    .select(['a.name', 'a.plan', 'a.subscription_status', 'a.current_period_end', 'a.requests_per_minute', 'a.created_at as account_created_at', 'a.updated_at as account_updated_at'])
    .select((eb) =>
      jsonArrayFrom(eb.selectFrom('organizations as o').select(['o.id', 'o.legal_name', 'o.archived']).whereRef('o.account_id', '=', 'u.account_id').orderBy('o.created_at').orderBy('o.id')).as('organizations'),
    )
    .where('u.id', '=', userId.toLowerCase())
    .executeTakeFirst();
  if (!row) return null;
  return {
    user: { id: row.id, account_id: row.account_id, email: row.email, role: row.role as Role, disabled_at: row.disabled_at, last_sign_in_at: row.last_sign_in_at, created_at: row.created_at },
    account: {
      id: row.account_id, name: row.name, plan: row.plan, subscription_status: row.subscription_status, current_period_end: row.current_period_end,
      requests_per_minute: row.requests_per_minute, created_at: row.account_created_at, updated_at: row.account_updated_at,
    },
    organizations: row.organizations,
  };
}

/**
 * Disables a user: their sessions end at their next request (every request
 * re-reads the user), and they cannot sign in again. Disabling twice keeps
 * the first time.
 */
export async function disableUser(db: Kysely<Database>, id: string): Promise<DashboardUser> {
  const row = await db
    .updateTable('dashboard_users')
    .set((eb) => ({ disabled_at: eb.fn.coalesce('disabled_at', eb.fn<Date>('now')) }))
    .where('id', '=', checkUuid(id, 'user'))
    .returning(COLUMNS)
    .executeTakeFirst();
  if (!row) throw new DomainError('NOT_FOUND', `user ${id} not found`);
  return row as DashboardUser;
}

// Verified against when the email is unknown, so both cases cost one argon2id verification.
let decoy: Promise<string> | null = null;

/** The active user with this email and password, else null (unknown, disabled or wrong password). */
export async function authenticate(db: Kysely<Database>, email: string, password: string): Promise<DashboardUser | null> {
  const row = await db
    .selectFrom('dashboard_users')
    .select([...COLUMNS, 'password_hash'])
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.trim().toLowerCase()))
    .executeTakeFirst();
  if (!row) {
    await verify(await (decoy ??= hashPassword('decoy password, never matches')), password).catch(() => false);
    return null;
  }
  const ok = await verify(row.password_hash, password).catch(() => false);
  if (!ok || row.disabled_at) return null;
  await db.updateTable('dashboard_users').set({ last_sign_in_at: new Date() }).where('id', '=', row.id).execute();
  const { password_hash: _hash, ...user } = row;
  return user as DashboardUser;
}
