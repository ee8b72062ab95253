/**
 * The invoices and invoice-numbers projectors: a rebuild from zero gives the
 * live tables row for row, and delivering every batch twice (in batches of
 * every size) gives the same rows too.
 */
import { expect } from 'chai';
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { RecordedEvent } from '../../src/eventstore/types.ts';
import { recount as recountMonths } from '../../src/db/migrations/0102_invoice_issue_month_counts.ts';
import { invoiceNumbersProjector } from '../../src/projections/invoice-numbers.ts';
import { invoicesProjector } from '../../src/projections/invoices.ts';
import type { Projector } from '../../src/projections/projector.ts';
import { rebuildProjection } from '../../src/projections/rebuild.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/wait.ts';
import { invoicesClient, line } from './support.ts';

const KEYS: Record<string, string> = {
  invoices: 'id',
  invoice_lines: 'invoice_id, position',
  invoice_tax_breakdown: 'invoice_id, rate',
  invoice_numbers: 'organization_id, year, sequence',
  invoice_status_counts: 'organization_id, status, slot',
  invoice_issue_month_counts: 'organization_id, month, status, slot',
};

/** Every row of a table as JSON text (numerics, dates and instants exactly as stored). */
async function dump(db: Kysely<any>, table: string): Promise<string[]> {
  const { rows } = await sql<{ r: string }>`select row_to_json(t)::text as r from ${sql.table(table)} t order by ${sql.raw(KEYS[table])}`.execute(db);
  return rows.map((x) => x.r);
}

async function dumpAll(db: Kysely<any>): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of Object.keys(KEYS)) out[table] = await dump(db, table);
  return out;
}

/** Some traffic: two organizations, every transition, edits, currencies, two years. */
async function traffic(server: TestServer): Promise<void> {
  for (let t = 0; t < 2; t++) {
    const api = await invoicesClient(server);
    const customer = await api.customer();
    const b2c = await api.customer({ type: 'b2c', ice: null, name: 'Particulier' });
    for (let i = 0; i < 6; i++) {
      const d = await api.draft(i % 2 ? b2c.id : customer.id, {
        issue_date: i === 5 ? '2025-12-31' : `2026-02-0${i + 1}`,
        currency: i === 4 ? 'JPY' : 'MAD',
        items: [line('A', i + 1, '10.5', 20), line('B', '0.5', 3, 7), line('C', 1, 1, 0)],
        internal_notes: i === 0 ? 'note interne' : undefined,
      });
      // Invoice 1 moves to March before it is finalized: its February count goes back to zero (and away).
      await api.patch(d.id, { notes: `v${i}`, items: [line('A', i + 2, '10.5'), line('D', 1, 99, 10)], ...(i === 1 ? { issue_date: '2026-03-15' } : {}) });
      if (i === 0) continue; // stays a draft
      await api.action(d.id, 'finalize');
      if (i >= 2) await api.action(d.id, 'send');
      if (i === 3) await api.action(d.id, 'pay', { payment_method: 'chèque' });
      if (i === 4) await api.action(d.id, 'void', { reason: 'Annulée' });
    }
  }
  // An organization whose only draft was finalized: its draft count went back to zero.
  const api = await invoicesClient(server);
  await api.finalized((await api.customer()).id);
}

async function readAllEvents(server: TestServer): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  for (let after: string | null = null; ; ) {
    const page = await server.server.runtime.store.readAll(after, 1000);
    if (page.length === 0) return out;
    out.push(...page);
    after = page[page.length - 1].position;
  }
}

describe('invoice projectors: rebuild and replay', function () {
  this.timeout(120_000);
  let server: TestServer;
  let live: Record<string, string[]>;

  before(async () => {
    server = await startTestServer();
    await traffic(server);
    live = await dumpAll(server.database.db);
  });
  after(() => server?.stop());

  it('has something to compare (drafts, every status, numbers in two years)', () => {
    expect(live.invoices).to.have.length(13);
    expect(live.invoice_lines).to.have.length(25);
    expect(live.invoice_numbers).to.have.length(11);
    expect(live.invoices.join()).to.include('"status":"void"').and.include('"finalization_pending":false');
    // 2 organizations x (1 draft, 1 finalized, 2 sent, 1 paid, 1 void), and one with a single finalized
    // invoice: a status without invoices keeps its row at zero (the same live or rebuilt). Counts are
    // kept in slots (migration 0070): summed per organization and status here, as the lists read them.
    const sums = new Map<string, number>();
    for (const r of live.invoice_status_counts.map((x) => JSON.parse(x))) sums.set(`${r.organization_id} ${r.status}`, (sums.get(`${r.organization_id} ${r.status}`) ?? 0) + r.invoices);
    expect([...sums].map(([k, n]) => k.split(' ')[1] + n).sort()).to.deep.equal([
      'draft0', 'draft1', 'draft1', 'finalized1', 'finalized1', 'finalized1', 'paid0', 'paid1', 'paid1',
      'sent0', 'sent2', 'sent2', 'void0', 'void1', 'void1',
    ]);
    // Every slot holding an invoice has all five statuses.
    expect(live.invoice_status_counts.length % 5).to.equal(0);
    // Month counts: exactly the invoices per organization, issue month, status and slot, no zero left behind.
    const months = live.invoice_issue_month_counts.map((x) => JSON.parse(x));
    expect(months.every((r) => r.invoices > 0)).to.equal(true);
    expect(months.some((r) => r.month === '2026-03-01')).to.equal(true);
    expect(months.reduce((n, r) => n + r.invoices, 0)).to.equal(13);
  });

  it('month counts equal a recount of the invoices table (migration 0102\'s own computation)', async () => {
    await recountMonths(server.database.db);
    expect(await dump(server.database.db, 'invoice_issue_month_counts')).to.deep.equal(live.invoice_issue_month_counts);
  });

  it('rebuildProjection from zero gives the live tables back, row for row (after the live ones were damaged)', async () => {
    const { db, pool } = server.database;
    await pool.query(`update invoices set total = 0, customer_type = null; delete from invoice_lines where position = 1;
                      delete from invoice_numbers where sequence = 1; update invoice_status_counts set invoices = 99;
                      update invoice_issue_month_counts set invoices = 7`);
    const { store } = server.server.runtime;
    const a = await rebuildProjection(db, store, invoicesProjector);
    const b = await rebuildProjection(db, store, invoiceNumbersProjector);
    expect(a.rows).to.deep.equal({ invoices: 13, invoice_lines: 25, invoice_tax_breakdown: live.invoice_tax_breakdown.length, invoice_status_counts: live.invoice_status_counts.length, invoice_issue_month_counts: live.invoice_issue_month_counts.length });
    expect(b.rows).to.deep.equal({ invoice_numbers: 11 });
    expect(await dumpAll(db)).to.deep.equal(live);
  });

  // A creation left to a runner (a process with INLINE_PROJECTIONS=false beside one writing inline) while the
  // invoice's next writes (a schedule's finalize right after its creation) go inline: the later events reach
  // the table first, the creation after, and changes nothing (older). The row, its lines and the counts must
  // still be a rebuild's.
  for (const way of ['apply', 'statements'] as const) {
    it(`an invoice's later events written before its creation give the same rows (through ${way === 'apply' ? 'apply()' : "an inline append's statements"})`, async () => {
      const events = await readAllEvents(server);
      const target: TestDatabase = await freshDatabase();
      const write = async (batch: RecordedEvent[]) => {
        const statements = way === 'statements' ? invoicesProjector.statements!(batch, pg.escapeLiteral) : null;
        if (!statements) return target.db.transaction().execute((trx) => invoicesProjector.apply(batch, trx));
        const client = await target.pool.connect();
        try {
          await client.query('begin');
          for (const [i, st] of statements.entries()) {
            if ('text' in st) await client.query(st.text);
            else await client.query(`prepare t${i} as ${st.sql}; execute t${i}${st.args.length ? `(${st.args.join(', ')})` : ''}; deallocate t${i}`);
          }
          await client.query('commit');
        } finally {
          client.release();
        }
      };
      try {
        const mine = events.filter((e) => invoicesProjector.handles.includes(e.type));
        for (const e of mine.filter((x) => x.type !== 'InvoiceCreated')) await write([e]);
        for (const e of mine) await write([e]); // the runner catching up: every event, in order
        const numbers = events.filter((e) => invoiceNumbersProjector.handles.includes(e.type));
        await target.db.transaction().execute((trx) => invoiceNumbersProjector.apply(numbers, trx));
        expect(await dumpAll(target.db)).to.deep.equal(live);
      } finally {
        await target.drop();
      }
    });
  }

  // A new database's invoices table was never analyzed, so PostgreSQL costs it as ten pages whatever it holds
  // (src/projections/invoices.ts, GENERIC_PLANS). The generic plan made then is kept until autovacuum's first
  // analyze: with `id = any(array)` it read the whole table at every write while the table grew.
  it("the upsert runs one generic plan that finds the batch's rows by primary key, even on a table never analyzed", async () => {
    const created = (await readAllEvents(server)).find((e) => e.type === 'InvoiceCreated')!;
    const target: TestDatabase = await freshDatabase();
    const client = await target.pool.connect();
    try {
      const { rows: stats } = await client.query(`select reltuples from pg_class where oid = 'invoices'::regclass`);
      expect(stats[0].reltuples, 'the template database analyzed invoices: this test needs it never analyzed').to.be.below(0);
      const [lock, upsert] = invoicesProjector.statements!([created], pg.escapeLiteral)!;
      if (!('text' in lock) || 'text' in upsert) throw new Error('expected the lock, then the prepared upsert');
      await client.query(`prepare upsert as ${upsert.sql}`);
      const execute = `execute upsert(${upsert.args.join(', ')})`;
      await client.query('begin');
      await client.query(lock.text);
      for (let i = 0; i < 7; i++) await client.query(execute); // past the five custom plans PostgreSQL tries first
      const { rows: plan } = await client.query(`explain (format json) ${execute}`);
      const nodes: { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string }[] = [];
      const walk = (n: any) => (nodes.push(n), (n.Plans ?? []).forEach(walk));
      walk(plan[0]['QUERY PLAN'][0].Plan);
      const onInvoices = nodes.filter((n) => n['Relation Name'] === 'invoices' && n['Node Type'] !== 'ModifyTable');
      expect(onInvoices.map((n) => `${n['Node Type']} ${n['Index Name'] ?? ''}`.trim())).to.deep.equal(['Index Scan invoices_pkey']);
      const { rows: used } = await client.query(`select generic_plans, custom_plans from pg_prepared_statements where name = 'upsert'`);
      expect(used[0]).to.deep.equal({ generic_plans: '8', custom_plans: '0' });
      await client.query('rollback');
    } finally {
      client.release();
      await target.drop();
    }
  });

  for (const size of [1, 3, 17, 500]) {
    it(`every batch delivered twice (batches of ${size}) gives the same rows`, async () => {
      const events = await readAllEvents(server);
      const target: TestDatabase = await freshDatabase();
      try {
        const apply = (p: Projector, batch: RecordedEvent[]) => {
          const mine = batch.filter((e) => p.handles.includes(e.type));
          return mine.length ? target.db.transaction().execute((trx) => p.apply(mine, trx)) : Promise.resolve();
        };
        for (let i = 0; i < events.length; i += size) {
          const batch = events.slice(i, i + size);
          for (const p of [invoicesProjector, invoiceNumbersProjector]) {
            await apply(p, batch);
            await apply(p, batch); // a redelivery after a lost commit acknowledgement
          }
        }
        // And a late replay of an old stretch (a runner restarted from an older checkpoint).
        await apply(invoicesProjector, events.slice(0, Math.ceil(events.length / 2)));
        expect(await dumpAll(target.db)).to.deep.equal(live);
      } finally {
        await target.drop();
      }
    });
  }
});

describe('invoice projector: two transactions applying the same invoice at once', function () {
  this.timeout(120_000);
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(() => server?.stop());

  /** The counts as a recount of the invoices table gives them (replaces the month counts with migration 0102's). */
  async function recounted(db: Kysely<any>) {
    await recountMonths(db);
    const statuses = await sql<{ r: string }>`select row_to_json(t)::text as r from (
        select organization_id, status, sum(n)::int as invoices from (
          select organization_id, status, count(*) as n from invoices group by 1, 2
          union all select organization_id, status, 0 from invoice_status_counts) x group by 1, 2 order by 1, 2) t`.execute(db);
    return { months: await dump(db, 'invoice_issue_month_counts'), statuses: statuses.rows.map((x) => x.r) };
  }

  async function kept(db: Kysely<any>) {
    const statuses = await sql<{ r: string }>`select row_to_json(t)::text as r from (
        select organization_id, status, sum(invoices)::int as invoices from invoice_status_counts group by 1, 2 order by 1, 2) t`.execute(db);
    return { months: await dump(db, 'invoice_issue_month_counts'), statuses: statuses.rows.map((x) => x.r) };
  }

  it('a batch of 3,000 invoices holds at most 1,024 advisory locks (a rebuild catch-up cannot fill the lock table)', async () => {
    const api = await invoicesClient(server);
    const draft = await api.draft((await api.customer()).id, { issue_date: '2026-05-10' });
    const created = (await readAllEvents(server)).find((e) => e.stream.endsWith(draft.id))!;
    const events = Array.from({ length: 3000 }, (_, i) => {
      const id = crypto.randomUUID();
      const data = structuredClone(created.data) as any;
      data.invoice.id = id;
      return { ...created, id: crypto.randomUUID(), stream: `invoice-${id}`, position: `${created.position}-${i}`, data };
    });
    const target = await freshDatabase();
    try {
      const held = await target.db.transaction().execute(async (trx) => {
        await invoicesProjector.apply(events, trx);
        return (await sql<{ n: number }>`select count(*)::int as n from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()`.execute(trx)).rows[0].n;
      });
      expect(held).to.be.greaterThan(900).and.at.most(1024);
      expect((await sql<{ n: number }>`select count(*)::int as n from invoices`.execute(target.db)).rows[0].n).to.equal(3000);
    } finally {
      await target.drop();
    }
  });

  // T2 takes the lock either inside apply() (inline, rebuild) or as the opening statement the runner sends with its BEGIN.
  for (const way of ['apply takes the lock', 'the opening statement takes it (the runner)'] as const) {
    it(`the second waits for the first and moves the counts from the state the first committed (a draft moved February -> March -> April; ${way})`, async () => {
      const api = await invoicesClient(server);
      const draft = await api.draft((await api.customer()).id, { issue_date: '2026-02-10' });
      expect((await api.patch(draft.id, { issue_date: '2026-03-10' })).status).to.equal(200);
      expect((await api.patch(draft.id, { issue_date: '2026-04-10' })).status).to.equal(200);
      const events = (await readAllEvents(server)).filter((e) => e.stream.endsWith(draft.id));
      expect(events).to.have.length(3);

      const target = await freshDatabase();
      try {
        await target.db.transaction().execute((trx) => invoicesProjector.apply([events[0]], trx));
        // T1 applies March and holds its transaction open; T2 applies April meanwhile; then T1 commits.
        let applied!: () => void;
        let release!: () => void;
        const t1Applied = new Promise<void>((resolve) => (applied = resolve));
        const gate = new Promise<void>((resolve) => (release = resolve));
        const t1 = target.db.transaction().execute(async (trx) => {
          await invoicesProjector.apply([events[1]], trx);
          applied();
          await gate;
        });
        await t1Applied;
        const t2 = target.db.transaction().execute(async (trx) => {
          if (way === 'apply takes the lock') return invoicesProjector.apply([events[2]], trx);
          const opening = invoicesProjector.opening!([events[2]], pg.escapeLiteral);
          expect(opening).to.be.a('string');
          await sql.raw(opening!).execute(trx);
          await invoicesProjector.apply([events[2]], trx, { opened: true });
        });
        await until(async () => (await sql<{ n: number }>`select count(*)::int as n from pg_locks where not granted`.execute(target.db)).rows[0].n > 0, 10_000, 'T2 waiting for T1');
        release();
        await Promise.all([t1, t2]);
        const got = await kept(target.db);
        expect(got).to.deep.equal(await recounted(target.db));
        expect(got.months).to.have.length(1); // April only
      } finally {
        await target.drop();
      }
    });
  }
});
