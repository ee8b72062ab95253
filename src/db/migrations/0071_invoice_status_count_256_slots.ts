import { sql, type Kysely } from 'kysely';

/**
 * invoice_status_counts in 256 slots per organization and status (the
 * invoice id's last byte; was 16, migration 0070). Measured with 32
 * concurrent creates in one organization (docs/performance.md "Inline
 * projections"), 16 slots still queued writers behind each other's commit
 * flush. Recomputed from the invoices table in the projector's form.
 */
export async function recompute(db: Kysely<any>, slots: number): Promise<void> {
  const slot = sql.raw(`get_byte(uuid_send(id), 15) % ${slots}`);
  await sql`delete from invoice_status_counts`.execute(db);
  await sql`
    insert into invoice_status_counts (organization_id, status, slot, invoices)
    select o.organization_id, s.status, o.slot, coalesce(c.n, 0)
    from (select distinct organization_id, ${slot} as slot from invoices) o
    cross join unnest(array['draft', 'finalized', 'sent', 'paid', 'void']) as s(status)
    left join (select organization_id, status, ${slot} as slot, count(*)::int as n from invoices group by 1, 2, 3) c
      on c.organization_id = o.organization_id and c.slot = o.slot and c.status = s.status
  `.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await recompute(db, 256);
}

export async function down(db: Kysely<any>): Promise<void> {
  await recompute(db, 16);
}
