/**
 * `audit export` and `audit invoice` as an operator runs them (child process)
 * against the log an API server wrote, and the export's day boundaries
 * (Casablanca days) on a hand-made log.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { v7 as uuidv7 } from 'uuid';
import { casablancaMidnight, exportEvents } from '../../src/audit/export.ts';
import { canonicalJson } from '../../src/eventstore/jcs.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { runAdmin } from '../support/admin-cli.ts';
import { createAccount, insertOrganizationRow } from '../support/fixtures.ts';
import { freshDatabase } from '../support/database.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { invoicesClient, type InvoicesClient } from '../invoices/support.ts';

function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  return rows;
}

describe('audit export and audit invoice (CLI, on a log written through the API)', function () {
  this.timeout(300_000);
  let t: TestServer;
  let api: InvoicesClient;
  let org: string;
  let invoiceId: string;
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Africa/Casablanca' }).format(new Date());

  before(async () => {
    t = await startTestServer();
    api = await invoicesClient(t);
    org = api.tenant.organizationId;
    const customer = await api.customer();
    const inv = await api.finalized(customer.id);
    const paid = await api.action(inv.id, 'pay', { payment_method: 'virement', payment_reference: 'VIR-1' });
    expect(paid.status).to.equal(200);
    invoiceId = inv.id;
    // Another tenant's events must not leak into the export.
    const other = await invoicesClient(t);
    await other.draft((await other.customer()).id);
  });
  after(() => t?.stop());

  async function orgEvents(): Promise<{ id: string; hash: string }[]> {
    const { rows } = await sql<{ id: string; hash: string }>`select event_id as id, hash from es_events
      where metadata->>'organization_id' = ${org} order by transaction_id, global_position`.execute(t.database.db);
    return rows;
  }

  it('export --format jsonl: every event of the organization in log order, with its hash', async function () {
    const r = await runAdmin(t.database.url, ['audit', 'export', '--org', org, '--from', today, '--to', today]);
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => ({ id: l.event_id, hash: l.hash }))).to.deep.equal(await orgEvents());
    expect(lines.every((l) => l.metadata.organization_id === org)).to.equal(true);
    expect(lines.map((l) => l.type)).to.include.members(['InvoiceCreated', 'InvoiceFinalized', 'InvoicePaid']);
    expect(Object.keys(lines[0])).to.deep.equal(['position', 'stream', 'revision', 'event_id', 'type', 'occurred_at', 'actor', 'hash', 'data', 'metadata']);
  });

  it('export --format csv: a header and the same rows, RFC 4180 quoting', async function () {
    const r = await runAdmin(t.database.url, ['audit', 'export', '--org', org, '--from', today, '--to', today, '--format', 'csv']);
    expect(r.code, r.stderr).to.equal(0);
    const rows = parseCsv(r.stdout);
    expect(rows[0]).to.deep.equal(['position', 'stream', 'revision', 'event_id', 'type', 'occurred_at', 'actor', 'hash', 'data', 'metadata']);
    const expected = await orgEvents();
    expect(rows.slice(1).map((row) => ({ id: row[3], hash: row[7] }))).to.deep.equal(expected);
    expect(JSON.parse(rows[1][9]).organization_id).to.equal(org);
  });

  it('export of a range without events prints nothing', async function () {
    const r = await runAdmin(t.database.url, ['audit', 'export', '--org', org, '--from', '2020-01-01', '--to', '2020-12-31']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal('');
  });

  it('invoice ID: the state after each event, every hash checked', async function () {
    const r = await runAdmin(t.database.url, ['audit', 'invoice', invoiceId, '--json']);
    expect(r.code, r.stderr).to.equal(0);
    const steps = JSON.parse(r.stdout);
    expect(steps.map((s: any) => [s.revision, s.type, s.state.status])).to.deep.equal([
      [0, 'InvoiceCreated', 'draft'],
      [1, 'InvoiceFinalizationStarted', 'draft'],
      [2, 'InvoiceFinalized', 'finalized'],
      [3, 'InvoicePaid', 'paid'],
    ]);
    expect(steps.every((s: any) => s.hash_ok)).to.equal(true);
    expect(steps[2].state.invoice_number).to.match(/^INV-\d{4}-000001$/);
    expect(steps[3].state.amount_due).to.equal('0.00');
    const table = await runAdmin(t.database.url, ['audit', 'invoice', invoiceId]);
    expect(table.code).to.equal(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header).to.match(/^REV\s+EVENT\s+OCCURRED_AT\s+ACTOR\s+STATUS\s+NUMBER\s+SUBTOTAL\s+TAX\s+TOTAL\s+DUE\s+HASH$/);
    expect(rows).to.have.length(4);
    expect(rows[3]).to.match(/^3\s+InvoicePaid\s+\S+\s+\S+\s+paid\s+INV-/);

    // An edited event shows as BROKEN and exits 1.
    await sql`update es_events set data = jsonb_set(data::jsonb, '{invoice,notes}', '"edited"') where stream_id = ${`invoice-${invoiceId}`} and revision = 1`.execute(t.database.db);
    const broken = await runAdmin(t.database.url, ['audit', 'invoice', invoiceId]);
    expect(broken.code).to.equal(1);
    expect(broken.stdout.split('\n')[2]).to.match(/ BROKEN$/);
    await sql`update es_events set data = jsonb_set(data::jsonb, '{invoice,notes}', 'null') where stream_id = ${`invoice-${invoiceId}`} and revision = 1`.execute(t.database.db);
  });

  it('bad input: one line and exit code 2', async function () {
    const cases: [string[], RegExp][] = [
      [['export', '--org', 'x', '--from', today, '--to', today], /^error: --org "x" is not a UUID$/],
      [['export', '--from', today, '--to', today], /^error: --org is required$/],
      [['export', '--org', org, '--from', '2026-02-30', '--to', today], /^error: --from "2026-02-30" is not a date \(YYYY-MM-DD\)$/],
      [['export', '--org', org, '--from', today], /^error: --to is required \(YYYY-MM-DD\)$/],
      [['export', '--org', org, '--from', '2026-05-02', '--to', '2026-05-01'], /^error: --from 2026-05-02 is after --to 2026-05-01$/],
      [['export', '--org', org, '--from', today, '--to', today, '--format', 'xml'], /^error: --format "xml" is not jsonl or csv$/],
      [['export', '--org', uuidv7(), '--from', today, '--to', today], /^error: no organization /],
      [['invoice', 'nope'], /^error: invoice id "nope" is not a UUID$/],
      [['invoice', uuidv7()], /^error: no invoice /],
      [['invoice'], /^error: invoice id is required$/],
    ];
    for (const [args, message] of cases) {
      const r = await runAdmin(t.database.url, ['audit', ...args]);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(2);
      expect(r.stdout).to.equal('');
      expect(r.stderr.trim().split('\n')).to.have.length(1);
      expect(r.stderr.trim()).to.match(message);
    }
  });
});

describe('audit export: the text path', function () {
  it("PostgreSQL's readAllText (data copied as text) and the generic path (parsed, printed again) export the same events", async function () {
    const database = await freshDatabase();
    const store = await createPostgresEventStore(database.pool);
    try {
      const org = uuidv7();
      const at = '2026-11-24T10:00:00.000Z';
      const meta = (organization_id: string, actor?: unknown) => ({ organization_id, ...(actor !== undefined ? { actor } : {}), request_id: null, correlation_id: null, causation_id: null, occurred_at: at }) as any;
      const data = [
        { text: 'Facture « été », "guillemets", \\ et \n ligne', arabic: 'فاتورة ١٢٣', emoji: '😀', nested: { b: [1, 2.5, -0, null, true], a: {} }, n: 12345678901234 },
        { empty: '', list: [], zero: 0 },
        { third: true },
        { fourth: true },
      ];
      // Actors: a string, absent, JSON null, a number (old or hand-written events): each exported as the generic path does.
      const actors: unknown[] = ['key_1', undefined, null, 42];
      for (const [i, d] of data.entries()) {
        await store.appendToStream(`thing-${uuidv7()}`, [{ id: uuidv7(), type: 'T', data: d, metadata: meta(org, actors[i]) }], 'no_stream');
        await store.appendToStream(`thing-${uuidv7()}`, [{ id: uuidv7(), type: 'T', data: { other: i }, metadata: meta(uuidv7(), 'key_2') }], 'no_stream');
      }
      const generic = { ...store, readAllText: undefined };
      const run = async (s: typeof store, format: 'jsonl' | 'csv') => {
        const out = new PassThrough();
        let text = '';
        out.on('data', (c) => (text += c));
        const n = await exportEvents(s, out, { organizationId: org, from: '2026-11-24', to: '2026-11-24', format });
        return { n, text };
      };
      const [textJsonl, genericJsonl] = [await run(store, 'jsonl'), await run(generic, 'jsonl')];
      expect(textJsonl.n).to.equal(4);
      expect(genericJsonl.n).to.equal(4);
      // The text path copies the stored text, which is the hashed RFC 8785 text (migration 0103); the generic one JSON.stringify's.
      const lines = textJsonl.text.trimEnd().split('\n');
      for (const [i, d] of data.entries()) expect(lines[i]).to.contain(`"data":${canonicalJson(d)},`);
      expect(genericJsonl.text).to.contain('"zero":0');
      const parse = (t: string) => t.trimEnd().split('\n').map((l) => JSON.parse(l));
      expect(parse(textJsonl.text)).to.deep.equal(parse(genericJsonl.text));
      expect(parse(textJsonl.text).map((r) => r.data)).to.deep.equal(data.map((d) => JSON.parse(JSON.stringify(d))));
      for (let i = 0; i < 4; i++) expect(Object.keys(parse(textJsonl.text)[i])).to.deep.equal(Object.keys(parse(genericJsonl.text)[i])); // an absent actor: left out alike
      expect(parse(textJsonl.text).map((r) => r.actor)).to.deep.equal(['key_1', undefined, null, 42]);

      const [textCsv, genericCsv] = [parseCsv((await run(store, 'csv')).text), parseCsv((await run(generic, 'csv')).text)];
      expect(textCsv).to.have.length(5);
      const asValues = (rows: string[][]) => rows.map((r, n) => r.map((f, i) => (n > 0 && i >= 8 && f ? JSON.parse(f) : f))); // data and metadata: the same JSON
      expect(asValues(textCsv)).to.deep.equal(asValues(genericCsv));
    } finally {
      await store.close();
      await database.drop();
    }
  });
});

describe('audit export into a pipe its reader closes early (`| head`)', function () {
  this.timeout(120_000);
  it('stops at the closed pipe and exits 0 without a word on stderr', async () => {
    const database = await freshDatabase();
    try {
      const org = await insertOrganizationRow(database.db, await createAccount(database.db));
      // 5,000 events of 1 KB: far more than a pipe holds, so the export is still writing when the reader leaves.
      await database.pool.query(`insert into es_events (stream_id, revision, event_id, type, data, metadata, hash)
        select 'thing-' || i, 0, gen_random_uuid(), 'T', jsonb_build_object('pad', repeat('x', 1000)),
               jsonb_build_object('organization_id', $1::text, 'actor', 'system', 'occurred_at', '2026-11-20T10:00:00.000Z'), md5(i::text) || md5(i::text)
        from generate_series(1, 5000) i`, [org]);
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', 'audit', 'export', '--org', org, '--from', '2026-11-20', '--to', '2026-11-20'], {
        env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c) => (stderr += c));
      const first = await new Promise<string>((resolve) => child.stdout.once('data', (c) => resolve(String(c))));
      expect(JSON.parse(first.split('\n')[0]).stream).to.match(/^thing-/);
      child.stdout.destroy(); // the reader leaves, as head does after its lines
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect({ code, stderr }).to.deep.equal({ code: 0, stderr: '' });
    } finally {
      await database.drop();
    }
  });
});

describe('audit export: Casablanca day boundaries', function () {
  it('places midnight at UTC+1 (January 2026) and takes [from 00:00, to+1 00:00)', async function () {
    // January 2026: UTC+1 in every time zone database a supported Node carries (tzdata 2026c moves Morocco
    // to UTC+0 from 2026-09-20; Node 20 carries 2025c, which does not know it yet).
    expect(casablancaMidnight('2026-01-13').toISOString()).to.equal('2026-01-12T23:00:00.000Z');
    const database = await freshDatabase();
    const store = await createPostgresEventStore(database.pool);
    try {
      const org = uuidv7();
      const at = ['2026-01-12T22:59:59.999Z', '2026-01-12T23:00:00.000Z', '2026-01-14T22:59:59.999Z', '2026-01-14T23:00:00.000Z'];
      for (const occurred_at of at) {
        await store.appendToStream(`thing-${uuidv7()}`, [{ id: uuidv7(), type: 'T', data: { occurred_at }, metadata: { organization_id: org, actor: 'system', request_id: null, correlation_id: null, causation_id: null, occurred_at } }], 'no_stream');
      }
      const out = new PassThrough();
      let text = '';
      out.on('data', (c) => (text += c));
      const n = await exportEvents(store, out, { organizationId: org, from: '2026-01-13', to: '2026-01-14', format: 'jsonl' });
      expect(n).to.equal(2);
      expect(text.trimEnd().split('\n').map((l) => JSON.parse(l).occurred_at)).to.deep.equal([at[1], at[2]]);
    } finally {
      await store.close();
      await database.drop();
    }
  });
});
