import { sql, type Kysely } from 'kysely';

/**
 * invoice_status_counts split into 16 slots per organization and status
 * (`slot` = the invoice id's last byte mod 16; src/projections/invoices.ts).
 * With inline projections (docs/architecture.md "Inline projections") every
 * invoice write updates its organization's count row inside the append's
 * transaction, and a row lock is held until the commit's WAL flush: one row
 * per status made concurrent writes of one organization commit one at a
 * time. Sixteen rows spread them; readers already sum the rows
 * (src/queries/invoices.ts). The counts are recomputed here from the
 * invoices table, in the form the projector now writes: a row per status
 * for every slot that holds an invoice, zeros included.
 */
const SLOT = sql.raw('get_byte(uuid_send(id), 15) % 16');

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table invoice_status_counts add column slot smallint not null default 0;
    alter table invoice_status_counts drop constraint invoice_status_counts_pkey;
    alter table invoice_status_counts add primary key (organization_id, status, slot);
    alter table invoice_status_counts alter column slot drop default;
    delete from invoice_status_counts;
  `.execute(db);
  await sql`
    insert into invoice_status_counts (organization_id, status, slot, invoices)
    select o.organization_id, s.status, o.slot, coalesce(c.n, 0)
    from (select distinct organization_id, ${SLOT} as slot from invoices) o
    cross join unnest(array['draft', 'finalized', 'sent', 'paid', 'void']) as s(status)
    left join (select organization_id, status, ${SLOT} as slot, count(*)::int as n from invoices group by 1, 2, 3) c
      on c.organization_id = o.organization_id and c.slot = o.slot and c.status = s.status
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create temporary table counts as select organization_id, status, sum(invoices)::int as invoices from invoice_status_counts group by 1, 2;
    delete from invoice_status_counts;
    alter table invoice_status_counts drop constraint invoice_status_counts_pkey;
    alter table invoice_status_counts drop column slot;
    alter table invoice_status_counts add primary key (organization_id, status);
    insert into invoice_status_counts select * from counts;
    drop table counts;
  `.execute(db);
}
