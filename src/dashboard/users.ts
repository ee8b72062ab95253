/**
 * Dashboard users (CONTRACT section 15): people who sign in to an account's
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
import { v7 as uuidv7 } from 'uuid';
import { checkUuid } from '../accounts/accounts.ts';
import { DomainError } from '../shared/errors.ts';

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
  db: Kysely<any>,
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
      .values({ id: uuidv7(), account_id: accountId, email: input.email.trim(), role: input.role, password_hash: passwordHash })
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

export async function listUsers(db: Kysely<any>, accountId: string): Promise<DashboardUser[]> {
  return (await db
    .selectFrom('dashboard_users')
    .select(COLUMNS)
    .where('account_id', '=', checkUuid(accountId, 'account'))
    .orderBy('created_at')
    .orderBy('id')
    .execute()) as DashboardUser[];
}

export async function getUser(db: Kysely<any>, id: string): Promise<DashboardUser | null> {
  const row = await db.selectFrom('dashboard_users').select(COLUMNS).where('id', '=', checkUuid(id, 'user')).executeTakeFirst();
  return (row as DashboardUser | undefined) ?? null;
}

/**
 * Disables a user: their sessions end at their next request (every request
 * re-reads the user), and they cannot sign in again. Disabling twice keeps
 * the first time.
 */
export async function disableUser(db: Kysely<any>, id: string): Promise<DashboardUser> {
  const row = await db
    .updateTable('dashboard_users')
    .set((eb) => ({ disabled_at: eb.fn.coalesce('disabled_at', eb.fn('now')) }))
    .where('id', '=', checkUuid(id, 'user'))
    .returning(COLUMNS)
    .executeTakeFirst();
  if (!row) throw new DomainError('NOT_FOUND', `user ${id} not found`);
  return row as DashboardUser;
}

// Verified against when the email is unknown, so both cases cost one argon2id verification.
let decoy: Promise<string> | null = null;

/** The active user with this email and password, else null (unknown, disabled or wrong password). */
export async function authenticate(db: Kysely<any>, email: string, password: string): Promise<DashboardUser | null> {
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
