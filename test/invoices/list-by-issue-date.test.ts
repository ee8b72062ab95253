/**
 * Lists filtered by issue date (src/queries/invoices.ts `listByIssueDate`):
 * whichever plan the count and the probe choose (walk the creation order,
 * or read the date range first), the page and the total are exactly those
 * of the plain definition: every matching invoice in (created_at, id)
 * order, cut at the page. On a real PostgreSQL, with issue dates that
 * follow creation for most invoices and not for others, so both plans run.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import type pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { recount as recountMonths } from '../../src/db/migrations/0102_invoice_issue_month_counts.ts';
import { listInvoices, type InvoiceListQuery } from '../../src/queries/invoices.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';

describe('invoice lists by issue date', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  const org = uuidv7();
  before(async () => {
    database = await freshDatabase();
    // 3,000 invoices over 2024-2026: issue dates follow creation, except every seventh (any date);
    // created_at collides every 10 rows, so the id breaks ties. Another organization's 500 must never show.
    for (const [o, n] of [[org, 3000], [uuidv7(), 500]] as const) {
      await sql`insert into invoices (id, organization_id, status, finalization_pending, customer_id, customer_name, currency, issue_date,
          subtotal, total_tax, total, amount_due, created_at, updated_at, version, items, tax_breakdown)
        select gen_random_uuid(), ${o}::uuid, (array['draft','finalized','sent','paid','void'])[1 + g % 5], false, gen_random_uuid(), 'Client', 'MAD',
          case when g % 7 = 0 then date '2024-01-01' + ((g * 7919) % 1095) else date '2024-01-01' + ((g * 1095) / ${n})::int end,
          100, 20, 120, 120, timestamptz '2024-01-01' + (g / 10) * interval '1 hour', now(), 1, '[]'::jsonb, '[]'::jsonb
        from generate_series(1, ${n}) g`.execute(database.db);
    }
    // A few at the ends of the calendar the API accepts (years 1000 to 9999).
    await sql`insert into invoices (id, organization_id, status, finalization_pending, customer_id, customer_name, currency, issue_date,
        subtotal, total_tax, total, amount_due, created_at, updated_at, version, items, tax_breakdown)
      select gen_random_uuid(), ${org}::uuid, 'draft', false, gen_random_uuid(), 'Client', 'MAD', d::date, 100, 20, 120, 120, now(), now(), 1, '[]'::jsonb, '[]'::jsonb
      from unnest(array['9999-12-31', '9999-12-20', '9999-11-30', '1000-01-01']) d`.execute(database.db);
    // The rows were written without the projector: their month counts as migration 0102 computes them.
    await recountMonths(database.db);
    await sql`analyze invoices`.execute(database.db);
  });
  after(() => database?.drop());

  async function expected(q: InvoiceListQuery): Promise<{ ids: string[]; total: number }> {
    const { rows } = await sql<{ id: string }>`select id from invoices where organization_id = ${org}
        and (${q.status ?? null}::text is null or status = ${q.status ?? null})
        and (${q.date_from ?? null}::date is null or issue_date >= ${q.date_from ?? null}::date)
        and (${q.date_to ?? null}::date is null or issue_date <= ${q.date_to ?? null}::date)
      order by created_at, id`.execute(database.db);
    const all = rows.map((r) => r.id);
    if (q.order === 'desc') all.reverse();
    return { ids: all.slice((q.page - 1) * q.per_page, q.page * q.per_page), total: all.length };
  }

  it('gives the plain definition\'s page and total, over ranges old and new, wide and narrow, both orders, pages and a status', async () => {
    const names: string[] = [];
    const spy = { query: (config: pg.QueryConfig) => (names.push(config.name ?? ''), database.pool.query(config)) } as unknown as pg.Pool;
    const ranges: [string | undefined, string | undefined][] = [
      ['2026-12-01', '2026-12-31'], ['2024-02-01', '2024-02-29'], ['2024-01-01', '2024-12-31'], ['2025-04-01', '2025-06-30'],
      ['2024-03-01', undefined], [undefined, '2024-03-01'], ['2020-01-01', '2030-12-31'], ['2030-01-01', undefined], ['2025-06-15', '2025-06-15'],
      // Edges inside months (whole months summed from the month counts, the edges counted), and two partial months only.
      ['2024-02-15', '2025-03-10'], ['2024-02-15', undefined], [undefined, '2025-03-10'], ['2024-01-31', '2024-02-01'], ['2024-12-31', '2025-12-30'],
      // Year ends, a leap day, one whole month exactly, a range before every invoice.
      ['2024-12-31', '2025-01-01'], ['2024-02-29', '2024-03-01'], ['2025-01-01', '2025-01-31'], ['2024-11-30', '2025-02-01'], [undefined, '2023-12-31'],
      // The calendar's ends, and reversed ranges (empty).
      [undefined, '9999-12-31'], ['2024-03-01', '9999-12-31'], ['9999-12-15', undefined], ['9999-12-31', '2025-06-15'], ['9999-12-01', '9999-12-31'], ['1000-01-01', '1000-01-31'], ['2025-06-15', '2025-06-14'],
    ];
    let checked = 0;
    for (const [date_from, date_to] of ranges) {
      for (const order of ['desc', 'asc'] as const) {
        for (const [page, per_page, status] of [[1, 20, undefined], [3, 7, undefined], [1, 100, 'paid']] as const) {
          const q: InvoiceListQuery = { page, per_page, order, ...(status ? { status } : {}), ...(date_from ? { date_from } : {}), ...(date_to ? { date_to } : {}) };
          const got = await listInvoices(spy, org, q);
          const want = await expected(q);
          expect({ ids: got.data.map((i) => i.id), total: got.total }, JSON.stringify(q)).to.deep.equal(want);
          checked++;
        }
      }
    }
    expect(checked).to.equal(ranges.length * 6);
    // Both plans ran (the statement names say which), and the counts came from the month counts.
    expect(names.some((n) => n.endsWith('.range')), names.join(' ')).to.equal(true);
    expect(names.some((n) => n.startsWith('invoices.list.') && !n.endsWith('.range'))).to.equal(true);
    expect(names.some((n) => n.startsWith('invoices.count.months.'))).to.equal(true);
  });
});
