import { sql, type Kysely } from 'kysely';

/**
 * customers: read model of the customer streams (projector
 * src/projections/customers.ts). Flat columns rather than jsonb so analysts
 * can query it directly; the address is spread over address_* columns and
 * reassembled by src/queries/customers.ts. The invoices handler reads
 * (organization_id, id) -> id, name, type, ice, email, phone, address_*, status
 * for its customer snapshot: keep those names.
 *
 * No generated columns and no defaults the projector relies on: a rebuild
 * copies rows with `insert ... select *` between identical tables.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table customers (
      id uuid primary key,
      organization_id uuid not null,
      name text not null,
      type text not null,
      ice text,
      legal_name text,
      rc text,
      email text,
      phone text,
      address_street text,
      address_city text,
      address_postal_code text,
      address_country text not null,
      notes text,
      tags text[] not null,
      status text not null,
      archived_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      version integer not null,
      search_text text not null
    );
    comment on column customers.type is 'b2b | b2c';
    comment on column customers.status is 'active | inactive | archived';
    comment on column customers.version is 'revision of the last event of stream customer-<id> (the API ETag)';
    comment on column customers.search_text is
      'name, email and ICE, lowercased and accent-stripped by the projector (src/shared/search.ts), one per line';

    -- GET /customers: every list reads one organization in (created_at, id) order, either direction.
    create index customers_org_created on customers (organization_id, created_at desc, id desc);
    create index customers_org_status on customers (organization_id, status, created_at desc, id desc);
    create index customers_org_type on customers (organization_id, type, created_at desc, id desc);
    -- Support and analysts look customers up by ICE (uniqueness is the reservation protocol's, not an index's).
    create index customers_org_ice on customers (organization_id, ice) where ice is not null;
  `.execute(db);

  // Substring search (LIKE '%term%') can use a trigram index. pg_trgm ships with
  // the embedded PostgreSQL but maybe not with an external server (or we may
  // lack the right to create it): then search scans the organization's rows,
  // which the organization_id indexes keep small. Never a failed migration.
  await sql`
    do $$
    begin
      if exists (select 1 from pg_available_extensions where name = 'pg_trgm') then
        begin
          create extension if not exists pg_trgm;
          create index customers_search_trgm on customers using gin (search_text gin_trgm_ops);
        exception when others then
          raise notice 'customers: no trigram index (%)', sqlerrm;
        end;
      end if;
    end
    $$;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // pg_trgm stays: other tables may use it.
  await sql`drop table customers`.execute(db);
}
