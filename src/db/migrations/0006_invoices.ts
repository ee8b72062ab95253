import { sql, type Kysely } from 'kysely';

/**
 * Invoice read models (projectors src/projections/invoices.ts and
 * src/projections/invoice-numbers.ts). Plain columns an analyst can query:
 * numeric for money and line inputs, date for calendar dates, timestamptz for
 * instants. Amounts are numeric(30,4), not (18,4): a line may be 1e9 x 1e9
 * (src/shared/money.ts MAX_LINE_INPUT), and an overflow would stop the
 * projector. The API formats them back with the currency's minor units.
 *
 * No generated columns and no defaults the projectors rely on: a rebuild
 * copies rows with `insert ... select *` between identical tables.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table invoices (
      id uuid primary key,
      organization_id uuid not null,
      invoice_number text,
      status text not null,
      -- True between InvoiceFinalizationStarted and InvoiceFinalized: the
      -- recovery worker completes these (docs/invoices.md).
      finalization_pending boolean not null,
      customer_id uuid not null,
      customer_name text not null,
      -- The buyer as validated at finalize, frozen for the legal document
      -- (null while a draft: a draft shows the customer's current data).
      customer_type text,
      customer_ice text,
      customer_email text,
      customer_phone text,
      customer_address_street text,
      customer_address_city text,
      customer_address_postal_code text,
      customer_address_country text,
      currency text not null,
      issue_date date not null,
      due_date date,
      payment_terms text,
      notes text,
      internal_notes text,
      subtotal numeric(30,4) not null,
      total_tax numeric(30,4) not null,
      total numeric(30,4) not null,
      amount_due numeric(30,4) not null,
      finalized_at timestamptz,
      sent_at timestamptz,
      paid_at timestamptz,
      payment_method text,
      payment_reference text,
      voided_at timestamptz,
      void_reason text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      version integer not null
    );
    comment on column invoices.status is 'draft | finalized | sent | paid | void';
    comment on column invoices.version is 'revision of the last event of stream invoice-<id> (the API ETag)';

    -- GET /invoices: one organization in (created_at, id) order, either direction, per filter.
    create index invoices_org_created on invoices (organization_id, created_at desc, id desc);
    create index invoices_org_status on invoices (organization_id, status, created_at desc, id desc);
    create index invoices_org_customer on invoices (organization_id, customer_id, created_at desc, id desc);
    create index invoices_org_issue_date on invoices (organization_id, issue_date);
    -- A duplicate number would stop the projector loudly rather than be shown.
    create unique index invoices_org_number on invoices (organization_id, invoice_number) where invoice_number is not null;
    create index invoices_finalization_pending on invoices (updated_at) where finalization_pending;

    create table invoice_lines (
      invoice_id uuid not null,
      organization_id uuid not null,
      position integer not null,
      description text not null,
      quantity numeric(18,4) not null,
      unit_price numeric(18,4) not null,
      tax_rate numeric(5,2) not null,
      total numeric(30,4) not null,
      primary key (invoice_id, position)
    );
    comment on column invoice_lines.total is 'net amount (HT): round(quantity x unit_price) to the minor unit';

    create table invoice_tax_breakdown (
      invoice_id uuid not null,
      organization_id uuid not null,
      rate numeric(5,2) not null,
      taxable_amount numeric(30,4) not null,
      tax_amount numeric(30,4) not null,
      primary key (invoice_id, rate)
    );

    -- Audit of continuity: one row per InvoiceNumberAssigned. Within an
    -- organization and year, sequences are exactly 1..N (docs/api-decisions.md "Official numbers").
    create table invoice_numbers (
      organization_id uuid not null,
      year integer not null,
      sequence integer not null,
      number text not null,
      invoice_id uuid not null,
      assigned_at timestamptz not null,
      primary key (organization_id, year, sequence),
      constraint invoice_numbers_invoice_key unique (invoice_id)
    );
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table invoice_numbers, invoice_tax_breakdown, invoice_lines, invoices`.execute(db);
}
