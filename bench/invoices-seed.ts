/**
 * Seeds an organization with many invoices for the list benchmark, fast: the
 * events are decided by the real deciders (so the snapshots are exactly what
 * the API would have written) and written to the PostgreSQL event store in
 * bulk (thousands of events per INSERT, one transaction per chunk) instead
 * of one append per request. The projectors then catch up as they would
 * after a restart, which is also a measure of replay speed.
 */
import { isConnectionError } from '../src/db/connection.ts';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { InvoiceCommand, InvoiceCustomer } from '../src/commands/invoice/commands.ts';
import { initialInvoiceState, invoiceDecider, type InvoiceState } from '../src/commands/invoice/decider.ts';
import { invoiceStream } from '../src/commands/invoice/events.ts';
import { formatInvoiceNumber, invoiceNumberStream } from '../src/commands/invoicenumber/decider.ts';
import { bodyDigest, chainStep, GENESIS_HASH } from '../src/eventstore/chain.ts';
import { canonicalJson } from '../src/eventstore/jcs.ts';
import type { EventMetadata } from '../src/eventstore/types.ts';

interface Row {
  stream: string;
  revision: number;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  id?: string;
  hash?: string;
}

/** Event ids and the hash chain es_append would have given these events (rows are in revision order per stream). */
function chain(rows: Row[]): void {
  const heads = new Map<string, string>();
  for (const r of rows) {
    r.id = randomUUID();
    r.hash = chainStep(heads.get(r.stream) ?? GENESIS_HASH, r.stream, r.revision, bodyDigest(r as Required<Row>));
    heads.set(r.stream, r.hash);
  }
}

const CHUNK = 4000;

/** Statuses by share: the list benchmark filters on one of them. */
export const SEED_MIX = [
  ['draft', 0.4],
  ['finalized', 0.25],
  ['paid', 0.25],
  ['void', 0.1],
] as const;

function statusOf(i: number, total: number): string {
  let edge = 0;
  for (const [status, share] of SEED_MIX) {
    edge += share * total;
    if (i < edge) return status;
  }
  return 'draft';
}

export interface SeedResult {
  invoices: number;
  events: number;
}

export async function seedInvoices(pool: pg.Pool, organizationId: string, customer: InvoiceCustomer, total: number): Promise<SeedResult> {
  const rows: Row[] = [];
  const numberStream = invoiceNumberStream(organizationId, 2026);
  let sequence = 0;
  const start = Date.parse('2026-01-01T08:00:00.000Z');
  // Interleave statuses in time, so a status filter's rows are spread over the whole list.
  const order = Array.from({ length: total }, (_, i) => i).sort((a, b) => ((a * 7919) % total) - ((b * 7919) % total));
  for (let k = 0; k < total; k++) {
    const status = statusOf(order[k], total);
    const id = uuidv7();
    const now = new Date(start + k * 1000).toISOString();
    const metadata: EventMetadata = { organization_id: organizationId, actor: 'seed', request_id: null, correlation_id: null, causation_id: null, occurred_at: now };
    const command = { now, actor: 'seed', organization_id: organizationId };
    let state: InvoiceState = initialInvoiceState;
    const run = (c: InvoiceCommand) => {
      for (const e of invoiceDecider.decide(c, state)) {
        state = invoiceDecider.evolve(state, e);
        rows.push({ stream: invoiceStream(id), revision: state.revision, type: e.type, data: e.data, metadata });
      }
    };
    const items = Array.from({ length: 5 }, (_, i) => ({ description: `Prestation ${i + 1}`, quantity: i + 1, unit_price: '125.50', tax_rate: i === 4 ? 10 : 20 }));
    run({ type: 'CreateInvoice', data: { invoice_id: id, customer_id: customer.id, customer, issue_date: now.slice(0, 10), items }, metadata: command });
    if (status === 'draft') continue;
    run({ type: 'StartFinalization', data: { invoice_id: id, customer, organization: { legal_name: 'Bench SARL', ice: '000000000000001' } }, metadata: command });
    sequence++;
    const number = formatInvoiceNumber(2026, sequence);
    rows.push({ stream: numberStream, revision: sequence - 1, type: 'InvoiceNumberAssigned', data: { invoice_id: id, number, sequence, year: 2026 }, metadata });
    run({ type: 'CompleteFinalization', data: { invoice_id: id, invoice_number: number }, metadata: command });
    if (status === 'paid') run({ type: 'PayInvoice', data: { invoice_id: id }, metadata: command });
    if (status === 'void') run({ type: 'VoidInvoice', data: { invoice_id: id, reason: 'Annulée' }, metadata: command });
  }
  chain(rows);
  for (let i = 0; i < rows.length; i += CHUNK) await insertChunk(pool, rows.slice(i, i + CHUNK));
  return { invoices: total, events: rows.length };
}

async function insertChunk(pool: pg.Pool, rows: Row[], attempt = 1): Promise<void> {
  const last = new Map<string, number>();
  for (const r of rows) last.set(r.stream, Math.max(last.get(r.stream) ?? -1, r.revision));
  // Built before the transaction opens: under heavy load the JSON of 4,000 events must not hold it open.
  const columns = [rows.map((r) => r.stream), rows.map((r) => r.revision), rows.map((r) => r.id), rows.map((r) => r.type),
    rows.map((r) => canonicalJson(r.data)), rows.map((r) => canonicalJson(r.metadata)), rows.map((r) => r.hash)];
  const client = await pool.connect();
  let failed: unknown = null;
  try {
    // The service's connections end a transaction idle for 10 s; sending a 4,000-event chunk
    // on a machine under heavy load took longer than that (the server then closed the socket: EPIPE).
    await client.query('begin; set local idle_in_transaction_session_timeout = 0');
    await client.query(
      `insert into es_streams (stream_id, revision) select * from unnest($1::text[], $2::bigint[])
       on conflict (stream_id) do update set revision = greatest(es_streams.revision, excluded.revision)`,
      [[...last.keys()], [...last.values()]],
    );
    await client.query(
      `insert into es_events (stream_id, revision, event_id, type, data, metadata, hash)
       select * from unnest($1::text[], $2::bigint[], $3::uuid[], $4::text[], $5::json[], $6::json[], $7::text[])`,
      columns,
    );
    await client.query(`select pg_notify('es_appended', '')`);
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => {});
    failed = err;
  } finally {
    client.release(failed ? (failed as Error) : undefined);
  }
  if (failed === null) return;
  // A pooled connection that died while the seed computed (seen under load as EPIPE): the chunk
  // was rolled back with it, so it is sent once more on a fresh connection.
  if (isConnectionError(failed) && attempt === 1) return insertChunk(pool, rows, 2);
  throw failed;
}
