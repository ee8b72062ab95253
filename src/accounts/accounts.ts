/**
 * Accounts: the platform's customers, with their plan and subscription.
 * Configuration, not business history, so a plain table (docs/architecture.md "Read side: typed tables");
 * operators change it through the admin CLI.
 */
import { sql, type Kysely } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { isPlan, type Plan } from './plans.ts';
import { DomainError } from '../shared/errors.ts';
import { BUSINESS_TIME_ZONE } from '../shared/business-time.ts';
import { isUuid } from '../shared/ids.ts';
import type { Database } from '../db/schema.ts';

export type SubscriptionStatus = 'active' | 'expired';

export interface Account {
  id: string;
  name: string;
  plan: Plan;
  subscription_status: SubscriptionStatus;
  /** Last day of the paid period (YYYY-MM-DD), null when open-ended. */
  current_period_end: string | null;
  requests_per_minute: number | null;
  created_at: Date;
  updated_at: Date;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function checkDate(value: string): string {
  const d = new Date(`${value}T00:00:00Z`);
  if (!DATE.test(value) || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value) {
    throw new DomainError('VALIDATION_ERROR', `"${value}" is not a date (YYYY-MM-DD)`);
  }
  return value;
}

// Built once: constructing an Intl.DateTimeFormat costs more than a whole API request's checks.
const CASABLANCA_DATE = new Intl.DateTimeFormat('en-CA', { timeZone: BUSINESS_TIME_ZONE });

let cached = { second: -1, date: '' };

/** Today in Morocco (docs/api-decisions.md "Identifiers, dates and money"), as YYYY-MM-DD (formatted at most once a second: every request asks). */
export function todayInCasablanca(now = new Date()): string {
  const second = Math.floor(now.getTime() / 1000);
  if (second !== cached.second) cached = { second, date: CASABLANCA_DATE.format(now) };
  return cached.date;
}

/**
 * The subscription as clients see it: expired when marked so, or when its
 * paid period ended before today (the last day itself is still covered).
 */
export function effectiveSubscriptionStatus(
  a: Pick<Account, 'subscription_status' | 'current_period_end'>,
  today = todayInCasablanca(),
): SubscriptionStatus {
  if (a.subscription_status === 'expired') return 'expired';
  return a.current_period_end !== null && a.current_period_end < today ? 'expired' : 'active';
}

export interface NewAccount {
  name: string;
  plan: string;
  currentPeriodEnd?: string | null;
  requestsPerMinute?: number | null;
}

export async function createAccount(db: Kysely<Database>, input: NewAccount): Promise<Account> {
  const name = input.name.trim();
  if (name === '') throw new DomainError('VALIDATION_ERROR', 'the account name is empty');
  if (!isPlan(input.plan)) throw new DomainError('VALIDATION_ERROR', `"${input.plan}" is not a plan (starter, professional, fiduciaire)`);
  const row = await db
    .insertInto('accounts')
    .values({
      id: uuidv7(),
      name,
      plan: input.plan,
      current_period_end: input.currentPeriodEnd ? checkDate(input.currentPeriodEnd) : null,
      requests_per_minute: input.requestsPerMinute ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return row as Account;
}

export interface AccountChanges {
  plan?: string;
  subscriptionStatus?: string;
  /** A date, or null to clear it. */
  currentPeriodEnd?: string | null;
  requestsPerMinute?: number | null;
}

export async function updateAccount(db: Kysely<Database>, id: string, changes: AccountChanges): Promise<Account> {
  const set: Record<string, unknown> = {};
  if (changes.plan !== undefined) {
    if (!isPlan(changes.plan)) throw new DomainError('VALIDATION_ERROR', `"${changes.plan}" is not a plan (starter, professional, fiduciaire)`);
    set.plan = changes.plan;
  }
  if (changes.subscriptionStatus !== undefined) {
    if (changes.subscriptionStatus !== 'active' && changes.subscriptionStatus !== 'expired') {
      throw new DomainError('VALIDATION_ERROR', `"${changes.subscriptionStatus}" is not a subscription status (active, expired)`);
    }
    set.subscription_status = changes.subscriptionStatus;
  }
  if (changes.currentPeriodEnd !== undefined) set.current_period_end = changes.currentPeriodEnd && checkDate(changes.currentPeriodEnd);
  if (changes.requestsPerMinute !== undefined) set.requests_per_minute = changes.requestsPerMinute;
  if (Object.keys(set).length === 0) throw new DomainError('VALIDATION_ERROR', 'nothing to change');
  const row = await db
    .updateTable('accounts')
    .set({ ...set, updated_at: sql`now()` })
    .where('id', '=', checkUuid(id, 'account'))
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new DomainError('NOT_FOUND', `account ${id} not found`);
  return row as Account;
}

export async function getAccount(db: Kysely<Database>, id: string): Promise<Account | null> {
  if (!isUuid(id)) return null;
  return ((await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst()) as Account | undefined) ?? null;
}

/** A malformed id is simply "not found" (never a SQL error). */
export function checkUuid(id: string, what: string): string {
  if (!isUuid(id)) throw new DomainError('NOT_FOUND', `${what} ${id} not found`);
  return id.toLowerCase();
}
