/**
 * A real server process (`node --import tsx src/main.ts`) killed with SIGKILL
 * in the middle of a finalize load, then restarted on the same database:
 * acknowledged finalizes survive with their numbers, no invoice is left
 * between lock and number (on PostgreSQL the lock, the number and the
 * completion commit together: every kill, in three rounds, finds as many of
 * each in the log), every event written inline has its row and no row
 * outruns its events right after each kill, numbers stay exactly 1..N,
 * projectors resume from their checkpoints (never behind, and equal to a
 * rebuild); in each projection mode. The recovery of a lock
 * left alone (the EventStoreDB protocol) is test/invoices/recovery.test.ts.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { freePort } from '../../src/db/embedded.ts';
import { invoiceNumbersProjector } from '../../src/projections/invoice-numbers.ts';
import { invoicesProjector } from '../../src/projections/invoices.ts';
import { rebuildProjection } from '../../src/projections/rebuild.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { createTenant } from '../support/fixtures.ts';
import { newIce } from '../customers/support.ts';
import { ServerProcess } from '../support/server-process.ts';
import { until } from '../support/wait.ts';
import { bindClient, expectError, type Reply } from './support.ts';

const DRAFTS = 250;
const KILL_AFTER_ACKS = 10;
const CONCURRENCY = 150;
const CREATES_PER_ROUND = 40;

async function checkpoints(t: TestDatabase): Promise<Record<string, string | null>> {
  const { rows } = await sql<{ name: string; position: string | null }>`select name, position from projection_checkpoints`.execute(t.db);
  return Object.fromEntries(rows.map((r) => [r.name, r.position]));
}

async function headOf(t: TestDatabase): Promise<string | null> {
  const store = await createPostgresEventStore(t.pool, t.url);
  try {
    return await store.headPosition();
  } finally {
    await store.close();
  }
}

async function numbersOf(t: TestDatabase, organizationId: string): Promise<string[]> {
  const { rows } = await sql<{ invoice_number: string }>`
    select invoice_number from invoices where organization_id = ${organizationId} and invoice_number is not null order by invoice_number`.execute(t.db);
  return rows.map((r) => r.invoice_number);
}

const expected = (n: number) => Array.from({ length: n }, (_, i) => `INV-2026-${String(i + 1).padStart(6, '0')}`);

// Every projection mode (docs/architecture.md "Inline projections"): rows written in the append's transaction
// ('true'), every projector async as with EventStoreDB ('false'), and the default ('auto': inline, creations
// under load in groups of one transaction, which the creates sent beside each round's finalizes make).
for (const mode of ['true', 'false', 'auto'] as const) describe(`finalize under SIGKILL (server child process, INLINE_PROJECTIONS=${mode})`, function () {
  const inline = mode !== 'false';
  this.timeout(240_000);
  let t: TestDatabase;
  let server: ServerProcess;

  before(async () => {
    t = await freshDatabase();
    server = new ServerProcess(t.url, await freePort(), { INLINE_PROJECTIONS: mode });
  });
  afterEach(function () {
    // The server's own account of what went wrong (its log) beside the assertion.
    if (this.currentTest?.state === 'failed') console.log(`      server output (tail):\n${server?.output.slice(-4000)}`);
  });
  after(async () => {
    await server?.kill('SIGTERM').catch(() => {});
    await t?.drop();
  });

  it('leaves no gap, no duplicate, no invoice stuck between lock and number; acknowledged writes survive', async () => {
    await server.start();
    const tenant = await createTenant(t.db, { plan: 'fiduciaire', account: { requestsPerMinute: 1_000_000 }, organization: { ice: newIce() } });
    const api = bindClient(`${server.root}/api/v1`, tenant);
    const customer = await api.customer();
    const ids: string[] = [];
    for (let i = 0; i < DRAFTS; i += 25) ids.push(...(await Promise.all(Array.from({ length: 25 }, () => api.draft(customer.id)))).map((d) => d.id));

    // The load: every remaining draft's finalize in flight at once; SIGKILL once KILL_AFTER_ACKS answered; three rounds or more.
    const acked = new Map<string, string>();
    let before: Record<string, string | null> = {};
    let left = { locked: 0, numbered: 0, finalized: 0 };
    // More rounds (up to ten: a loaded machine answers slowly, and a kill then often lands between commits) while
    // no kill has yet cut off a committed finalize's answer: with the write and its
    // rows in one message and the answer built without a read, that window is short, and the test is about it.
    for (let round = 1; round <= 3 || (round <= 10 && left.finalized === acked.size); round++) {
      if (round > 1) await server.start(); // its recovery now races the next load: harmless
      const todo = ids.filter((id) => !acked.has(id));
      let answered = 0;
      let killing: Promise<void> | null = null;
      // Creates beside the finalizes, so that kills also land among creations (grouped in 'auto').
      const creates = Promise.all(Array.from({ length: CREATES_PER_ROUND }, () => api.draft(customer.id).catch(() => null)));
      await Promise.all(todo.slice(0, CONCURRENCY).map(async (id) => {
        const res: Reply | null = await api.action(id, 'finalize').catch(() => null);
        if (res?.status === 200) acked.set(id, res.body.data.invoice_number);
        if (res?.status === 200 && ++answered >= KILL_AFTER_ACKS) killing ??= server.kill();
      }));
      await creates;
      await (killing ?? server.kill());
      before = await checkpoints(t); // the dead process's last commits
      // What the kill left, read from the event store itself (the projectors died too).
      left = (await sql<{ locked: number; numbered: number; finalized: number }>`
        select count(*) filter (where type = 'InvoiceFinalizationStarted')::int as locked,
               count(*) filter (where type = 'InvoiceNumberAssigned')::int as numbered,
               count(*) filter (where type = 'InvoiceFinalized')::int as finalized from es_events`.execute(t.db)).rows[0];
      if (process.env.TEST_VERBOSE) console.log(`      round ${round} after SIGKILL:`, JSON.stringify({ acked: acked.size, ...left }));
      expect(left, `what the kill of round ${round} left`).to.deep.equal({ locked: left.finalized, numbered: left.finalized, finalized: left.finalized });
      // Before any runner catches up: an event applied inline has its row, and no row is newer than its
      // stream's events (the write and its rows commit together, so a kill leaves both or neither).
      const { inline_streams: inlineStreams, ...halves } = (await sql<{ without_row: number; without_event: number; inline_streams: number }>`
        with streams as (
          select substr(e.stream_id, 9)::uuid as id,
                 max((e.data->'invoice'->>'version')::int) filter (where e.applied_inline) as inline_version,
                 max((e.data->'invoice'->>'version')::int) as last_version
          from es_events e where e.stream_id ~ '^invoice-[0-9a-f-]{36}$' and e.data->'invoice' is not null group by 1)
        select (select count(*) from streams s left join invoices i on i.id = s.id
                 where s.inline_version is not null and (i.id is null or i.version < s.inline_version))::int as without_row,
               (select count(*) from invoices i left join streams s on s.id = i.id
                 where i.version > coalesce(s.last_version, -1))::int as without_event,
               (select count(*) from streams where inline_version is not null)::int as inline_streams`.execute(t.db)).rows[0];
      expect(halves, `events and rows after the kill of round ${round}`).to.deep.equal({ without_row: 0, without_event: 0 });
      if (inline) expect(inlineStreams, 'invoices written inline (else the check above checks nothing)').to.be.greaterThan(0);
    }
    if (mode === 'auto') {
      // Creations went in groups (several InvoiceCreated in one transaction), as the mode is meant to test.
      const { rows } = await sql<{ n: number }>`
        select coalesce(max(n), 0)::int as n from (select count(*) as n from es_events where type = 'InvoiceCreated' group by transaction_id) g`.execute(t.db);
      expect(rows[0].n, 'the largest group of creations').to.be.greaterThan(1);
    }
    // The kills landed among commits: finalizes are in the log whose requests never got their 200 (a
    // later round's finalize of such an invoice is a 409), each with its lock and number (checked above).
    expect(left.finalized, 'finalizes committed whose answers a kill cut off').to.be.greaterThan(acked.size);

    await server.start();
    const org = tenant.organizationId;
    // Recovery finds the locks in the read model, so first the invoices projector must have
    // applied everything the dead process appended (it may have died before projecting it).
    const head = await headOf(t);
    await until(async () => ((await checkpoints(t)).invoices ?? '') >= (head ?? ''), 60_000, 'the invoices projector at the head', 50);
    await until(async () => {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from invoices where finalization_pending`.execute(t.db);
      return rows[0].n === 0;
    }, 60_000, 'recovery of the interrupted finalizations', 50);
    const after = await checkpoints(t);
    for (const [name, position] of Object.entries(before)) expect(after[name]! >= (position ?? ''), `checkpoint ${name} went back`).to.equal(true);

    // Acknowledged finalizes kept their numbers; every number is on exactly one invoice; 1..N without a hole.
    for (const [id, number] of acked) expect((await api.get(id)).body.data).to.include({ status: 'finalized', invoice_number: number });
    const numbered = await numbersOf(t, org);
    expect(numbered).to.deep.equal(expected(numbered.length));
    const audit = await sql<{ n: number; max: number }>`select count(*)::int as n, max(sequence) as max from invoice_numbers where organization_id = ${org}`.execute(t.db);
    expect(audit.rows[0]).to.deep.equal({ n: numbered.length, max: numbered.length });

    // The rest finalize normally after the restart; the ones recovery completed are no longer drafts.
    for (const id of ids) {
      const res = await api.action(id, 'finalize');
      if (res.status !== 200) expectError(res, 409, 'INVOICE_NOT_DRAFT');
    }
    expect(await numbersOf(t, org)).to.deep.equal(expected(DRAFTS));

    // The projected rows are what a replay from zero gives.
    const dump = async () => (await sql<{ r: string }>`select row_to_json(i)::text as r from invoices i order by id`.execute(t.db)).rows;
    const live = await dump();
    const store = await createPostgresEventStore(t.pool, t.url);
    try {
      await rebuildProjection(t.db, store, invoicesProjector);
      await rebuildProjection(t.db, store, invoiceNumbersProjector);
    } finally {
      await store.close();
    }
    expect(await dump()).to.deep.equal(live);
    expect(server.output).not.to.match(/projector stopped on a failing event/);
  });
});
