/**
 * Reads of the organizations read model, shaped as the docs/api-decisions.md "Representations"
 * representation. The profile comes from `organizations`; subscription and
 * API quotas from the account and its keys (configuration tables), joined at
 * read time so a plan change shows at once. Lists are scoped by account: a
 * foreign organization is simply not found.
 */
import { sql, type Kysely } from 'kysely';
import { effectiveSubscriptionStatus, type Account } from '../accounts/accounts.ts';
import { PLAN_LIMITS, requestsPerMinute, type Plan } from '../accounts/plans.ts';
import type { Organization, OrganizationProfile } from '../commands/organization/events.ts';
import { countQuotaSchedules } from './schedules.ts';
import { isoOrNull as iso } from '../shared/time.ts';
import type { Database } from '../db/schema.ts';

/** The organization representation: its id and profile, plus the account's subscription and quotas. */
export interface OrganizationView extends OrganizationProfile {
  id: string;
  subscription: { plan: Plan; status: 'active' | 'expired'; current_period_end: string | null };
  /** Unlimited limits are null (fiduciaire keys). */
  api_quotas: {
    requests_per_minute: number;
    api_keys_limit: number | null;
    api_keys_used: number;
    recurring_schedules_limit: number;
    recurring_schedules_used: number;
  };
  archived: boolean;
  archived_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The representation plus its version (the ETag, not a body field). */
export interface VersionedOrganization {
  view: OrganizationView;
  version: number;
}


/** A read-model row as the Organization snapshot the events carry. */
export function rowToOrganization(row: Record<string, any>): Organization {
  const a = row.billing_address; // jsonb does not keep key order: restore the documented one
  return {
    id: row.id, account_id: row.account_id, legal_name: row.legal_name, ice: row.ice, rc: row.rc, if_number: row.if_number,
    vat_number: row.vat_number, phone: row.phone, email: row.email, website: row.website,
    billing_address: { street: a.street, city: a.city, postal_code: a.postal_code, country: a.country },
    api_enabled: row.api_enabled, archived: row.archived, archived_at: iso(row.archived_at),
    created_at: iso(row.created_at)!, updated_at: iso(row.updated_at)!, version: row.version,
  };
}

/** What present() needs besides the organization itself, per organization id. */
interface Extras {
  account: Account;
  keysUsed: number;
}

function view(o: Organization, x: Extras, schedulesUsed: number): VersionedOrganization {
  const limits = PLAN_LIMITS[x.account.plan];
  const v: OrganizationView = {
    id: o.id, legal_name: o.legal_name, ice: o.ice, rc: o.rc, if_number: o.if_number, vat_number: o.vat_number, phone: o.phone,
    email: o.email, website: o.website, billing_address: o.billing_address,
    subscription: { plan: x.account.plan, status: effectiveSubscriptionStatus(x.account), current_period_end: x.account.current_period_end },
    api_quotas: {
      requests_per_minute: requestsPerMinute(x.account.plan, x.account.requests_per_minute),
      api_keys_limit: limits.apiKeysLimit,
      api_keys_used: x.keysUsed,
      recurring_schedules_limit: limits.recurringSchedulesLimit,
      recurring_schedules_used: schedulesUsed,
    },
    archived: o.archived, archived_at: o.archived_at, created_at: o.created_at, updated_at: o.updated_at,
  };
  return { view: v, version: o.version };
}

// The account and the active key count ride along with the organization row:
// one round trip per read, which is most of what a GET /organization costs.
const WITH_EXTRAS = sql`
  a.plan, a.subscription_status, a.current_period_end, a.requests_per_minute,
  (select count(*) from api_keys k where k.organization_id = o.id and k.revoked_at is null)::int as keys_used`;

function extrasOf(row: Record<string, any>): Extras {
  const account = { id: row.account_id, plan: row.plan, subscription_status: row.subscription_status, current_period_end: row.current_period_end, requests_per_minute: row.requests_per_minute } as Account;
  return { account, keysUsed: row.keys_used };
}

/** Adds subscription and quotas to organization snapshots (all of one account or several). */
export async function present(db: Kysely<Database>, organizations: Organization[]): Promise<VersionedOrganization[]> {
  if (organizations.length === 0) return [];
  const ids = organizations.map((o) => o.id);
  const { rows } = await sql<Record<string, any>>`
    select o.id, o.account_id, ${WITH_EXTRAS}
      from organizations o join accounts a on a.id = o.account_id
     where o.id = any(${ids}::uuid[])`.execute(db);
  const extras = new Map(rows.map((r) => [r.id as string, extrasOf(r)]));
  const schedules = await countQuotaSchedules(db, ids);
  return organizations.map((o) => {
    const x = extras.get(o.id);
    if (!x) throw new Error(`organization ${o.id} names a missing account ${o.account_id}`);
    return view(o, x, schedules.get(o.id) ?? 0);
  });
}

/** The organization row, or null when unknown or (with accountId) owned by another account. */
export async function findOrganization(db: Kysely<Database>, id: string, accountId?: string): Promise<Organization | null> {
  let q = db.selectFrom('organizations').selectAll().where('id', '=', id);
  if (accountId !== undefined) q = q.where('account_id', '=', accountId);
  const row = await q.executeTakeFirst();
  return row ? rowToOrganization(row) : null;
}

export async function getOrganization(db: Kysely<Database>, id: string, accountId?: string): Promise<VersionedOrganization | null> {
  const { rows } = await sql<Record<string, any>>`
    select o.*, ${WITH_EXTRAS}
      from organizations o join accounts a on a.id = o.account_id
     where o.id = ${id} ${accountId === undefined ? sql`` : sql`and o.account_id = ${accountId}`}`.execute(db);
  if (!rows[0]) return null;
  const schedules = await countQuotaSchedules(db, [id]);
  return view(rowToOrganization(rows[0]), extrasOf(rows[0]), schedules.get(id) ?? 0);
}

export interface OrganizationListQuery {
  includeArchived: boolean;
  page: number;
  perPage: number;
  order: 'asc' | 'desc';
}

export async function listOrganizations(
  db: Kysely<Database>,
  accountId: string,
  q: OrganizationListQuery,
): Promise<{ data: OrganizationView[]; total: number }> {
  let base = db.selectFrom('organizations').where('account_id', '=', accountId);
  if (!q.includeArchived) base = base.where('archived', '=', false);
  const { n } = await base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await base
    .selectAll()
    .orderBy('created_at', q.order)
    .orderBy('id', q.order)
    .limit(q.perPage)
    .offset((q.page - 1) * q.perPage)
    .execute();
  const data = (await present(db, rows.map(rowToOrganization))).map((o) => o.view);
  return { data, total: Number(n) };
}

/** Whether the organization is archived (or gone) in the read model: a scheduler's catch-up stops there. */
export async function organizationArchived(db: Kysely<Database>, id: string): Promise<boolean> {
  const row = await db.selectFrom('organizations').select('archived').where('id', '=', id).executeTakeFirst();
  return row?.archived !== false;
}
