/**
 * Read-only analyst logins (docs/read-models.md "Analyst logins"). Every
 * login made by `analyst create` is a member of the group role
 * invoicing_analyst, which may SELECT the documented tables and views only,
 * and sees only the rows of the organization its own role name carries:
 * `analyst_<organization id as 32 hex digits>_<suffix>`. A session cannot
 * change its current_user, so the policy needs no setting the analyst could
 * overwrite, and no function: nothing SECURITY DEFINER is involved.
 *
 * The service's own login owns these tables, and row-level security does not
 * apply to a table's owner: the service is unaffected. The views are
 * security_invoker (migration 0061), so the policies apply through them.
 */
import { sql, type Kysely } from 'kysely';

export const ANALYST_GROUP = 'invoicing_analyst';
/** Tables with an organization_id column: granted, and filtered by the policy. */
export const ANALYST_TABLES = ['invoices', 'invoice_lines', 'invoice_tax_breakdown', 'invoice_numbers', 'customers'] as const;
export const ANALYST_VIEWS = ['invoice_register', 'invoice_register_continuity', 'vat_by_period', 'receivables_aging', 'customer_statement'] as const;

const OWN_ORGANIZATION = sql.raw(`organization_id = (substring(current_user from '^analyst_([0-9a-f]{32})_[0-9a-z]+$'))::uuid`);

export async function up(db: Kysely<any>): Promise<void> {
  // Roles are per server, not per database: create the group once.
  await sql`
    do $$ begin
      create role ${sql.raw(ANALYST_GROUP)} nologin;
    exception when duplicate_object then null;
    end $$`.execute(db);
  for (const t of ANALYST_TABLES) {
    await sql`alter table ${sql.id(t)} enable row level security`.execute(db);
    await sql`create policy analyst_own_organization on ${sql.id(t)} for select to ${sql.raw(ANALYST_GROUP)} using (${OWN_ORGANIZATION})`.execute(db);
    await sql`grant select on ${sql.id(t)} to ${sql.raw(ANALYST_GROUP)}`.execute(db);
  }
  for (const v of ANALYST_VIEWS) await sql`grant select on ${sql.id(v)} to ${sql.raw(ANALYST_GROUP)}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const v of ANALYST_VIEWS) await sql`revoke select on ${sql.id(v)} from ${sql.raw(ANALYST_GROUP)}`.execute(db);
  for (const t of ANALYST_TABLES) {
    await sql`revoke select on ${sql.id(t)} from ${sql.raw(ANALYST_GROUP)}`.execute(db);
    await sql`drop policy analyst_own_organization on ${sql.id(t)}`.execute(db);
    await sql`alter table ${sql.id(t)} disable row level security`.execute(db);
  }
}
