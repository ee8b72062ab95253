/**
 * `npm run bench -- list-dates`: GET /invoices filtered by issue date (the
 * query behind it, src/queries/invoices.ts `listInvoices`, on the pool the
 * server uses), one request at a time, in an organization of BENCH_SEED
 * invoices (default 100,000) spread over three years in creation order,
 * beside the plain plan in the same run: the page walking
 * (organization_id, created_at) with the date filter and the count in
 * parallel, as every list ran before the range-first plan (the baseline).
 * Ranges recent and old, narrow and wide. Target (issue 16): p99 <= 20 ms
 * for each range. Cases alternate, so noise on a shared machine hits both
 * alike. BENCH_SCALE multiplies the requests per range (default 60).
 */
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { recount as recountMonths } from '../src/db/migrations/0102_invoice_issue_month_counts.ts';
import { listInvoices } from '../src/queries/invoices.ts';
import { createBenchDatabase, startBenchServer } from './support/postgres.ts';
import { fmtInt, fmtMs, summarize } from './support/stats.ts';
import { formatTable, markdownTable, type Cell } from './support/table.ts';

const SCALE = Number(process.env.BENCH_SCALE ?? '1') || 1;
const REQUESTS = Math.max(20, Math.round(60 * SCALE));
const SEED = Number(process.env.BENCH_SEED ?? 100_000);

const RANGES: [string, string | null, string | null][] = [
  ['one day, recent', '2026-12-01', '2026-12-01'],
  ['one month, recent', '2026-11-01', '2026-11-30'],
  ['one month, two years back', '2024-02-01', '2024-02-29'],
  ['one quarter, a year back', '2025-04-01', '2025-06-30'],
  ['one year, two years back', '2024-01-01', '2024-12-31'],
  ['one year, recent', '2026-01-01', '2026-12-31'],
  ['from a date, old', '2024-03-01', null],
  ['up to a date, old', null, '2024-03-01'],
  ['everything', '2020-01-01', '2030-12-31'],
];

export async function run(): Promise<void> {
  const server = await startBenchServer();
  const database = await createBenchDatabase(server, { poolSize: 4 });
  try {
    console.log(`server: ${server.description}`);
    const org = uuidv7();
    for (const [o, n] of [[org, SEED], [uuidv7(), Math.round(SEED / 5)]] as const) {
      await sql`insert into invoices (id, organization_id, status, finalization_pending, customer_id, customer_name, currency, issue_date,
          subtotal, total_tax, total, amount_due, created_at, updated_at, version, items, tax_breakdown)
        select gen_random_uuid(), ${o}::uuid, (array['draft','finalized','sent','paid','void'])[1 + g % 5], false, gen_random_uuid(), 'Client', 'MAD',
          date '2024-01-01' + ((g * 1095) / ${n})::int, 100, 20, 120, 120,
          timestamptz '2024-01-01' + (g * 1095.0 / ${n}) * interval '1 day' + random() * interval '3 days', now(), 1, '[]'::jsonb, '[]'::jsonb
        from generate_series(1, ${n}) g`.execute(database.db);
    }
    // Written without the projector: the month counts it would keep (migration 0102's computation).
    await recountMonths(database.db);
    await sql`vacuum analyze invoices`.execute(database.db);
    await sql`vacuum analyze invoice_issue_month_counts`.execute(database.db);
    console.log(`organization of ${fmtInt(SEED)} invoices (2024-2026, issue dates in creation order) and another of ${fmtInt(SEED / 5)}; ${REQUESTS} requests per range and plan`);

    /** The plain plan: page and count in parallel, the page walking the creation order. */
    const plain = async (from: string | null, to: string | null) => {
      const values: unknown[] = [org];
      const where = ['i.organization_id = $1'];
      if (from) where.push(`i.issue_date >= $${values.push(from)}`);
      if (to) where.push(`i.issue_date <= $${values.push(to)}`);
      const key = `${from ? 1 : 0}${to ? 1 : 0}`;
      await Promise.all([
        database.pool.query({ name: `plain.list.${key}`, text: `select i.* from invoices i where ${where.join(' and ')} order by i.created_at desc, i.id desc limit $${values.length + 1} offset 0`, values: [...values, 20] }),
        database.pool.query({ name: `plain.count.${key}`, text: `select count(*) as n from invoices i where ${where.join(' and ')}`, values }),
      ]);
    };
    const ours = (from: string | null, to: string | null) =>
      listInvoices(database.pool, org, { page: 1, per_page: 20, order: 'desc', ...(from ? { date_from: from } : {}), ...(to ? { date_to: to } : {}) });

    const rows: Cell[][] = [];
    let met = 0;
    for (const [label, from, to] of RANGES) {
      const total = (await ours(from, to)).total;
      const times = { plain: [] as number[], ours: [] as number[] };
      for (let i = 0; i < 5; i++) await Promise.all([plain(from, to), ours(from, to)]); // plans settled on each connection
      for (let i = 0; i < REQUESTS; i++) {
        for (const [name, f] of [['plain', plain], ['ours', ours]] as const) {
          const t0 = performance.now();
          await f(from, to);
          times[name].push(performance.now() - t0);
        }
      }
      const p = summarize(times.plain);
      const o = summarize(times.ours);
      if (o.p99 <= 20) met++;
      rows.push([label, fmtInt(total), fmtMs(p.p50), fmtMs(p.p99), fmtMs(o.p50), fmtMs(o.p99), `${(p.p99 / o.p99).toFixed(2)}x`, o.p99 <= 20 ? 'yes' : 'NO']);
    }
    const header = ['range (newest first, 20 a page)', 'invoices', 'plain p50', 'plain p99', 'ours p50', 'ours p99', 'p99 plain/ours', 'p99 <= 20 ms'];
    console.log(formatTable(header, rows));
    console.log(markdownTable(header, rows));
    console.log(`${met} of ${RANGES.length} ranges meet the target; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    await database.drop();
    await server.stop();
  }
}
