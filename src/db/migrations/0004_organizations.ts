import { sql, type Kysely } from 'kysely';

/**
 * - organizations: read model of the organization streams (projector
 *   src/projections/organizations.ts). The pipeline's authentication reads
 *   (id, account_id, archived, api_enabled) on every request.
 * - reservation_checks: reservations whose owner recovery must still confirm
 *   (src/workers/reservation-recovery.ts): a claim, or an intended release,
 *   not yet followed by a release. Rows leave once confirmed or released.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table organizations (
      id uuid primary key,
      account_id uuid not null,
      legal_name text not null,
      ice text,
      rc text,
      if_number text,
      vat_number text,
      phone text,
      email text,
      website text,
      billing_address jsonb not null,
      api_enabled boolean not null default true,
      archived boolean not null default false,
      archived_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      version integer not null
    );
    -- GET /organizations: an account's organizations by creation, newest first.
    create index organizations_account on organizations (account_id, created_at, id);
    -- Analysts and support look organizations up by ICE (uniqueness is the reservation protocol's).
    create index organizations_ice on organizations (ice) where ice is not null;

    create table reservation_checks (
      stream text primary key,
      kind text not null,
      scope text not null,
      value text not null,
      owner text not null,
      -- Revision of the event that asked for the check; a later one replaces the row.
      revision integer not null,
      since timestamptz not null
    );
    create index reservation_checks_since on reservation_checks (since);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table reservation_checks, organizations`.execute(db);
}
