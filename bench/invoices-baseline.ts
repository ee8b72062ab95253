/**
 * The baseline of `npm run bench -- invoices`: the least a server can do for
 * the same requests. Run as its own process (`node --import tsx
 * bench/invoices-baseline.ts`, DATABASE_URL and PORT in the environment), like
 * the real server, so both get a core of their own beside the load generator.
 *
 * - POST /invoices: express + pg, totals computed with the same decimal code,
 *   the invoice and its lines inserted as plain rows in one transaction,
 *   answered with the inserted row. No auth, no events, no projection.
 * - POST /invoices/:id/finalize: the classic gapless counter: in one
 *   transaction, bump the organization's counter row (a row lock serializes
 *   finalizes) and set the number and status on the invoice row.
 * - GET /invoices?status=: one indexed page select and one count.
 */
import express from 'express';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { computeTotals } from '../src/commands/invoice/totals.ts';
import { canonicalDecimal } from '../src/shared/money.ts';

export const BASELINE_TABLES = `
  create table if not exists bl_invoices (
    id uuid primary key, organization_id uuid not null, invoice_number text, status text not null,
    customer_id uuid not null, currency text not null, issue_date date not null,
    subtotal numeric(30,4) not null, total_tax numeric(30,4) not null, total numeric(30,4) not null,
    created_at timestamptz not null, updated_at timestamptz not null);
  create index if not exists bl_invoices_org_status on bl_invoices (organization_id, status, created_at desc, id desc);
  create table if not exists bl_invoice_lines (
    invoice_id uuid not null, position int not null, description text not null, quantity numeric(18,4) not null,
    unit_price numeric(18,4) not null, tax_rate numeric(5,2) not null, total numeric(30,4) not null,
    primary key (invoice_id, position));
  create table if not exists bl_counters (organization_id uuid not null, year int not null, last int not null, primary key (organization_id, year));`;

async function main(): Promise<void> {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 30, application_name: 'bench-baseline' });
  await pool.query(BASELINE_TABLES);
  const app = express();
  app.use(express.json({ limit: '1mb' }));
  /** BEGIN, `work`, COMMIT on one pooled connection, then the answer; a failure rolls back and answers `failStatus`. */
  const inTransaction = async (res: express.Response, status: number, failStatus: number, work: (client: pg.PoolClient) => Promise<unknown>) => {
    const client = await pool.connect();
    try {
      await client.query('begin');
      const data = await work(client);
      await client.query('commit');
      res.status(status).json({ success: true, data });
    } catch (err) {
      await client.query('rollback').catch(() => {});
      res.status(failStatus).json({ success: false, error: String(err) });
    } finally {
      client.release();
    }
  };

  app.post('/invoices', async (req, res) => {
    const { organization_id, customer_id, issue_date, currency = 'MAD', items } = req.body;
    const lines = items.map((l: any) => ({ ...l, tax_rate: l.tax_rate ?? 20 }));
    const totals = computeTotals(lines.map((l: any) => ({ quantity: String(l.quantity), unit_price: String(l.unit_price), tax_rate: String(l.tax_rate) })), currency);
    const id = uuidv7();
    await inTransaction(res, 201, 500, async (client) => {
      const { rows } = await client.query(
        `insert into bl_invoices values ($1, $2, null, 'draft', $3, $4, $5, $6, $7, $8, now(), now()) returning *`,
        [id, organization_id, customer_id, currency, issue_date, totals.subtotal, totals.total_tax, totals.total],
      );
      await client.query(
        `insert into bl_invoice_lines select $1, * from unnest($2::int[], $3::text[], $4::numeric[], $5::numeric[], $6::numeric[], $7::numeric[])`,
        [id, lines.map((_: unknown, i: number) => i + 1), lines.map((l: any) => l.description), lines.map((l: any) => canonicalDecimal(String(l.quantity))),
          lines.map((l: any) => canonicalDecimal(String(l.unit_price))), lines.map((l: any) => canonicalDecimal(String(l.tax_rate))), totals.line_totals],
      );
      return rows[0];
    });
  });

  app.post('/invoices/:id/finalize', async (req, res) => {
    await inTransaction(res, 200, 409, async (client) => {
      const inv = await client.query(`select organization_id, issue_date from bl_invoices where id = $1 and status = 'draft' for update`, [req.params.id]);
      if (!inv.rows[0]) throw new Error('not a draft');
      const year = Number(String(inv.rows[0].issue_date).slice(0, 4)) || 2026;
      const counter = await client.query(
        `insert into bl_counters values ($1, $2, 1) on conflict (organization_id, year) do update set last = bl_counters.last + 1 returning last`,
        [inv.rows[0].organization_id, year],
      );
      const number = `INV-${year}-${String(counter.rows[0].last).padStart(6, '0')}`;
      const { rows } = await client.query(`update bl_invoices set status = 'finalized', invoice_number = $2, updated_at = now() where id = $1 returning *`, [req.params.id, number]);
      return rows[0];
    });
  });

  app.get('/invoices', async (req, res) => {
    const org = String(req.query.organization_id);
    const status = String(req.query.status);
    const [page, count] = await Promise.all([
      pool.query(`select * from bl_invoices where organization_id = $1 and status = $2 order by created_at desc, id desc limit 20`, [org, status]),
      pool.query(`select count(*) from bl_invoices where organization_id = $1 and status = $2`, [org, status]),
    ]);
    res.json({ success: true, data: page.rows, meta: { pagination: { total: Number(count.rows[0].count) } } });
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  const listening = app.listen(Number(process.env.PORT));
  // As the service's (src/server.ts): the bench's keep-alive client idles on this server while
  // the other half runs, and under load that takes longer than Node's 5 s default; a socket the
  // server closed meanwhile made the next request fail with "socket hang up".
  listening.keepAliveTimeout = 65_000;
}

if (process.env.BASELINE_SERVER === '1') void main();
