/**
 * Read model `invoices` (+ `invoice_lines`, `invoice_tax_breakdown`, and
 * `invoice_status_counts` and `invoice_issue_month_counts` for the lists'
 * totals): one row per invoice stream, carrying its lines and breakdown as
 * JSON too (what the API reads; the two tables are for analysts' SQL).
 * Every invoice event carries the whole invoice, so a batch collapses to
 * the newest snapshot of each invoice, written with a version guard: a
 * batch applied twice, or replayed by a rebuild, changes nothing. Lines and
 * breakdown are rewritten only for rows that moved by a creation or an
 * edit. A batch is one to five set-based statements whatever its size (the
 * invoices' locks, which the runner sends with its BEGIN; the upsert with
 * the counts and the lines of new invoices; a month count fallen to zero
 * deleted; the lines of edited invoices, a delete and an insert; values go
 * in as unnest arrays), so live batches stay cheap and a replay of a busy
 * year stays fast.
 *
 * Tables: invoices, invoice_lines, invoice_tax_breakdown,
 * invoice_status_counts, invoice_issue_month_counts (migrations 0006, 0010,
 * 0013, 0070, 0102; types src/db/tables/invoices.ts). Read by
 * src/queries/invoices.ts and src/queries/invoice-rows.ts.
 */
import { sql, type Transaction } from 'kysely';
import type { InvoiceCustomer } from '../commands/invoice/commands.ts';
import { INVOICE_EVENT_TYPES, INVOICE_STATUSES, type Invoice, type InvoiceEvent } from '../commands/invoice/events.ts';
import type { RecordedEvent } from '../eventstore/types.ts';
import { compiledOnce, preparedStatement } from './inline-statements.ts';
import type { ApplyOptions, Projector } from './projector.ts';
import type { Database } from '../db/schema.ts';

interface Latest {
  organizationId: string;
  invoice: Invoice;
  pending: boolean;
  /** The buyer frozen by the newest finalization event of the batch, if any. */
  customer: InvoiceCustomer | null;
  /** Lines change only with InvoiceCreated / InvoiceUpdated; other events leave the stored ones right. */
  linesChanged: boolean;
  /** The batch holds its InvoiceCreated: it may be new to the table (its lines then go in with the upsert). */
  created: boolean;
}

function newestPerInvoice(events: readonly Pick<RecordedEvent, 'type' | 'data' | 'metadata'>[]): Latest[] {
  const newest = new Map<string, Latest>();
  for (const e of events) {
    const event = e as unknown as InvoiceEvent;
    const { invoice } = event.data;
    const customer = 'customer' in event.data ? event.data.customer : null;
    const known = newest.get(invoice.id);
    if (known && known.invoice.version >= invoice.version) continue;
    newest.set(invoice.id, {
      organizationId: String(e.metadata.organization_id),
      invoice,
      // Only InvoiceFinalized can follow the lock, so "pending" is "the newest event is the lock".
      pending: event.type === 'InvoiceFinalizationStarted',
      customer: customer ?? known?.customer ?? null,
      linesChanged: event.type === 'InvoiceCreated' || event.type === 'InvoiceUpdated' || (known?.linesChanged ?? false),
      created: event.type === 'InvoiceCreated' || (known?.created ?? false),
    });
  }
  return [...newest.values()];
}

function row({ organizationId, invoice: i, pending, customer: c }: Latest) {
  return {
    id: i.id,
    organization_id: organizationId,
    invoice_number: i.invoice_number,
    status: i.status,
    finalization_pending: pending,
    customer_id: i.customer_id,
    customer_name: i.customer_name,
    customer_type: c?.type ?? null,
    customer_ice: c?.ice ?? null,
    customer_email: c?.email ?? null,
    customer_phone: c?.phone ?? null,
    customer_address_street: c?.address.street ?? null,
    customer_address_city: c?.address.city ?? null,
    customer_address_postal_code: c?.address.postal_code ?? null,
    customer_address_country: c?.address.country ?? null,
    currency: i.currency,
    issue_date: i.issue_date,
    due_date: i.due_date,
    payment_terms: i.payment_terms,
    notes: i.notes,
    internal_notes: i.internal_notes,
    subtotal: i.subtotal,
    total_tax: i.total_tax,
    total: i.total,
    amount_due: i.amount_due,
    finalized_at: i.finalized_at,
    sent_at: i.sent_at,
    paid_at: i.paid_at,
    payment_method: i.payment_method,
    payment_reference: i.payment_reference,
    voided_at: i.voided_at,
    void_reason: i.void_reason,
    created_at: i.created_at,
    updated_at: i.updated_at,
    version: i.version,
    items: JSON.stringify(i.items),
    tax_breakdown: JSON.stringify(i.tax_breakdown),
  };
}

/** Column types of `invoices`, in row() order: the batch goes in as one array per column (unnest). */
const COLUMN_TYPES: Record<keyof ReturnType<typeof row>, string> = {
  id: 'uuid', organization_id: 'uuid', invoice_number: 'text', status: 'text', finalization_pending: 'boolean',
  customer_id: 'uuid', customer_name: 'text', customer_type: 'text', customer_ice: 'text', customer_email: 'text',
  customer_phone: 'text', customer_address_street: 'text', customer_address_city: 'text',
  customer_address_postal_code: 'text', customer_address_country: 'text', currency: 'text', issue_date: 'date',
  due_date: 'date', payment_terms: 'text', notes: 'text', internal_notes: 'text', subtotal: 'numeric',
  total_tax: 'numeric', total: 'numeric', amount_due: 'numeric', finalized_at: 'timestamptz', sent_at: 'timestamptz',
  paid_at: 'timestamptz', payment_method: 'text', payment_reference: 'text', voided_at: 'timestamptz',
  void_reason: 'text', created_at: 'timestamptz', updated_at: 'timestamptz', version: 'int',
  items: 'jsonb', tax_breakdown: 'jsonb',
};
const COLUMNS = Object.keys(COLUMN_TYPES) as (keyof typeof COLUMN_TYPES)[];
/** Frozen buyer columns: events after the finalization do not carry the buyer, so keep what is stored. */
const KEPT_WHEN_NULL = COLUMNS.filter((c) => c.startsWith('customer_') && c !== 'customer_id' && c !== 'customer_name');
const UPDATES = sql.raw(
  COLUMNS.filter((c) => c !== 'id')
    .map((c) => (KEPT_WHEN_NULL.includes(c) ? `${c} = coalesce(excluded.${c}, invoices.${c})` : `${c} = excluded.${c}`))
    .join(', '),
);

/**
 * Two-key transaction advisory locks on the batch's invoices (namespace
 * 1229870927, "INVO" in ASCII; the store's are "ESAP"), in one order.
 * Two transactions can apply the same invoice at once: a process writing
 * inline and another's runner (mixed modes), or a runner catching up after
 * a rebuild while inline writes go on. The upsert reads the rows' previous
 * status and month from its own snapshot, taken before it could wait for
 * the other transaction, and would move the counts from a stale state (or
 * count a new invoice twice). Taken in a statement of its own, the lock
 * makes the upsert's snapshot start after the other transaction's commit.
 * At most 1,024 keys (the id's hash, 10 bits): a transaction holds its
 * advisory locks until it ends, and a rebuild's catch-up applies every event
 * appended meanwhile in one transaction; one lock per invoice could fill
 * PostgreSQL's lock table. Two invoices sharing a key only wait for each
 * other's commit. The statement, around its array of ids:
 */
const LOCK = ['select pg_advisory_xact_lock(1229870927, k) from (select distinct hashtext(id) & 1023 as k from unnest(', ') as id order by 1) sorted'];

async function lockInvoices(trx: Transaction<Database>, ids: string[]): Promise<void> {
  await sql`${sql.raw(LOCK[0])}${ids}::text[]${sql.raw(LOCK[1])}`.execute(trx);
}

/** The same lock as SQL text, the ids as literals: the runner sends it with its BEGIN (Projector.opening), one round trip fewer. */
function lockText(ids: string[], literal: (value: string) => string): string {
  return `${LOCK[0]}array[${ids.map(literal).join(', ')}]::text[]${LOCK[1]}`;
}

/**
 * Sent with the lock in an inline append's message (statements() below), where the upsert is a statement
 * prepared once per connection: it then runs on one generic plan. Its `before` probes the primary key once
 * per invoice of the batch, which keeps that plan right on a young table; but PostgreSQL's automatic choice
 * costs a generic plan for the ten elements it assumes of an array parameter, finds ten probes dearer than
 * one, and would plan the five-part statement again at every write (a lone create 16 % slower,
 * docs/performance.md "The upsert's sequential scan"). It holds for every statement with parameters that
 * follows in the transaction, prepared or not: the message's other statements are keyed writes (the
 * month counts' deletion, the invoice numbers' insert), for which one plan suits every value; a statement
 * added after it must be one too. The runners send the upsert unprepared, planned for its batch each time.
 */
const GENERIC_PLANS = 'set local plan_cache_mode = force_generic_plan';

/** lockText, then GENERIC_PLANS: the inline message's first statement for the invoices projector. */
function inlineLockText(ids: string[], literal: (value: string) => string): string {
  return `${lockText(ids, literal)}; ${GENERIC_PLANS}`;
}

/**
 * After the lock, one statement: the version-guarded upsert of the batch's
 * newest snapshots, the lines and breakdown of those new to the table, and
 * the counts moved by what it changed (`before` reads
 * the statement's snapshot, so it sees the statuses and issue months as
 * they were); then, only when a month count fell to zero, its deletion.
 *
 * Status counts are kept in 256 slots per organization and status (the
 * invoice id's last byte; migrations 0070, 0071), month counts in 16
 * (0102): inline, this statement runs in the append's transaction and holds
 * the count rows it updates until the commit has flushed, so one row per
 * status would make an organization's writes commit one at a time. Only
 * rows whose count changes are touched (a zero-sum change, like the
 * finalization's lock, locks nothing). A slot gets a row per status, zeros
 * included, with its first invoice, and a month count is deleted at zero,
 * so both tables are the same however events were batched (live, inline or
 * rebuilt). Returns the rows that moved, and whether each was there before.
 */
async function upsertInvoices(trx: Transaction<Database>, latest: Latest[], locked: boolean): Promise<{ id: string; existed: boolean }[]> {
  if (!locked) await lockInvoices(trx, latest.map((l) => l.invoice.id));
  const { rows: moved } = await trx.executeQuery(upsertStatement(upsertValues(latest)));
  if (moved[0]?.emptied) await trx.executeQuery(DELETE_EMPTIED_MONTHS({}));
  return moved;
}

/**
 * The values of upsertStatement and lineSources, by name: one array per
 * column of `invoices` (`invoices.<column>`), of the lines (`line.<field>`)
 * and of the breakdown (`tax.<field>`), one element per row.
 */
type BatchValues = Record<string, unknown[]>;

function upsertValues(latest: Latest[]): BatchValues {
  const rows = latest.map(row);
  const values: BatchValues = lineValues(latest);
  for (const c of COLUMNS) values[`invoices.${c}`] = rows.map((r) => r[c]);
  return values;
}

/**
 * upsertInvoices' one statement: its text is the same whatever the batch (the values go in as arrays), so it is
 * compiled once (compiledOnce) and filled with each batch's upsertValues.
 */
const upsertStatement = compiledOnce((v: BatchValues) => {
  const arrays = COLUMNS.map((c) => sql`${v[`invoices.${c}`]}::${sql.raw(COLUMN_TYPES[c])}[]`);
  const names = sql.raw(COLUMNS.join(', '));
  // Lines of every invoice of the batch: those new to the table get theirs (every event carries the whole
  // invoice), even when its creation comes later (left to a runner while its finalize was written inline: the
  // creation then changes nothing, being older).
  const source = lineSources(v);
  return sql<{ id: string; existed: boolean; emptied: boolean }>`
    with input as (select * from unnest(${sql.join(arrays)}) as t(${names})),
    -- One primary-key probe per input row, whatever the table's statistics: a LATERAL subquery with a LIMIT is
    -- not flattened into a join, so the generic plan cannot turn it into a sequential scan. \`i.id = any(array)\`
    -- got one when the plan was made on a young table (never analyzed, costed as 10 pages), and kept it while the
    -- table grew: a create read every invoice until autovacuum's next analyze (docs/performance.md "The
    -- upsert's sequential scan").
    before as (
      select b.id, b.status, b.issue_date from input t
      cross join lateral (select i.id, i.status, i.issue_date from invoices i where i.id = t.id limit 1) b),
    moved as (
      insert into invoices (${names}) select ${names} from input
      on conflict (id) do update set ${UPDATES} where invoices.version < excluded.version
      returning id, organization_id, status, issue_date, get_byte(uuid_send(id), 15) as slot),
    deltas as (
      select organization_id, status, slot, 1 as n, false as opens from moved
      union all
      select m.organization_id, b.status, m.slot, -1, false from moved m join before b on b.id = m.id
      union all
      select distinct m.organization_id, s.status, m.slot, 0, true from moved m cross join unnest(${[...INVOICE_STATUSES]}::text[]) as s(status)
      -- A slot's rows are opened together, so its first status's row stands for all: a probe by the whole key
      -- (by organization and slot alone it read every count row of the organization, 1,280 of them). A scalar
      -- subquery, not NOT EXISTS: the planner turns NOT EXISTS into an anti join, and the prepared statement's
      -- generic plan made it a sequential scan of every organization's count rows, hashed (a third of a lone
      -- create's upsert on a small table, and growing with the table); a scalar subquery stays a lookup per row.
      where (select true from invoice_status_counts c where c.organization_id = m.organization_id and c.status = ${INVOICE_STATUSES[0]} and c.slot = m.slot) is null),
    counted as (
      insert into invoice_status_counts (organization_id, status, slot, invoices)
      select organization_id, status, slot, sum(n) from deltas group by 1, 2, 3 having sum(n) <> 0 or bool_or(opens)
      order by 1, 2, 3 -- rows locked in one order by every writer: concurrent writes cannot deadlock on them
      on conflict (organization_id, status, slot) do update set invoices = invoice_status_counts.invoices + excluded.invoices
      where excluded.invoices <> 0),
    month_deltas as (
      select organization_id, date_trunc('month', issue_date)::date as month, status, slot % 16 as slot, 1 as n from moved
      union all
      select m.organization_id, date_trunc('month', b.issue_date)::date, b.status, m.slot % 16, -1 from moved m join before b on b.id = m.id),
    -- Lines and breakdown of invoices new to the table, in the same statement (edits: rewriteLines).
    fresh as (select m.id from moved m where not exists (select from before b where b.id = m.id)),
    new_lines as (
      insert into invoice_lines (invoice_id, organization_id, position, description, quantity, unit_price, tax_rate, total)
      select l.* from ${source.lines} where l.invoice_id in (select id from fresh)),
    new_taxes as (
      insert into invoice_tax_breakdown (invoice_id, organization_id, rate, taxable_amount, tax_amount)
      select t.* from ${source.taxes} where t.invoice_id in (select id from fresh)),
    month_counted as (
      insert into invoice_issue_month_counts (organization_id, month, status, slot, invoices)
      select organization_id, month, status, slot, sum(n) from month_deltas group by 1, 2, 3, 4 having sum(n) <> 0
      order by 1, 2, 3, 4
      on conflict (organization_id, month, status, slot) do update set invoices = invoice_issue_month_counts.invoices + excluded.invoices
      returning organization_id, month, status, slot, invoices)
    select m.id, exists (select from before b where b.id = m.id) as existed, e.emptied is not null as emptied,
           -- For DELETE_EMPTIED_MONTHS, the statement after this one.
           set_config('invoicing.emptied_months', coalesce(e.emptied::text, ''), true) as noted
    from moved m cross join (
      select json_agg(json_build_object('organization_id', z.organization_id, 'month', z.month, 'status', z.status, 'slot', z.slot)) as emptied
      from month_counted z where z.invoices = 0) e`;
});

/**
 * A month's count that fell to zero (a draft moved to another month, or its last invoice changed status) is
 * deleted, so the table holds the non-zero counts only, however the events were batched (migration 0102).
 * The upsert notes those rows in a transaction-local setting, which this statement reads: apply() runs it
 * when the upsert says some fell to zero, an inline append's message after the upsert (statements() below),
 * where the upsert's answer cannot be read first. None when the setting is empty or unset.
 */
const DELETE_EMPTIED_MONTHS = compiledOnce(
  () => sql`
    delete from invoice_issue_month_counts c
    using json_to_recordset(nullif(current_setting('invoicing.emptied_months', true), '')::json) as z(organization_id uuid, month date, status text, slot smallint)
    where c.organization_id = z.organization_id and c.month = z.month and c.status = z.status and c.slot = z.slot and c.invoices = 0`,
);

/** The lines and tax breakdown of these invoices as BatchValues (`line.<field>`, `tax.<field>`). */
function lineValues(latest: Latest[]): BatchValues {
  const lines = latest.flatMap((l) => l.invoice.items.map((item) => ({ ...item, invoice_id: l.invoice.id, organization_id: l.organizationId })));
  const taxes = latest.flatMap((l) => l.invoice.tax_breakdown.map((t) => ({ ...t, invoice_id: l.invoice.id, organization_id: l.organizationId })));
  const values: BatchValues = {};
  for (const k of ['invoice_id', 'organization_id', 'position', 'description', 'quantity', 'unit_price', 'tax_rate', 'total'] as const) values[`line.${k}`] = lines.map((l) => l[k]);
  for (const k of ['invoice_id', 'organization_id', 'rate', 'taxable_amount', 'tax_amount'] as const) values[`tax.${k}`] = taxes.map((t) => t[k]);
  return values;
}

/** The lines and tax breakdown of lineValues, each as a row source of unnest arrays (one per column) that an insert selects from. */
function lineSources(v: BatchValues) {
  return {
    lines: sql`unnest(${v['line.invoice_id']}::uuid[], ${v['line.organization_id']}::uuid[], ${v['line.position']}::int[],
                      ${v['line.description']}::text[], ${v['line.quantity']}::numeric[], ${v['line.unit_price']}::numeric[],
                      ${v['line.tax_rate']}::numeric[], ${v['line.total']}::numeric[])
               as l(invoice_id, organization_id, position, description, quantity, unit_price, tax_rate, total)`,
    taxes: sql`unnest(${v['tax.invoice_id']}::uuid[], ${v['tax.organization_id']}::uuid[], ${v['tax.rate']}::numeric[],
                      ${v['tax.taxable_amount']}::numeric[], ${v['tax.tax_amount']}::numeric[])
               as t(invoice_id, organization_id, rate, taxable_amount, tax_amount)`,
  };
}

/**
 * Lines and breakdown of invoices that were already in the table and whose
 * lines changed (an edit) are replaced: one statement deletes, one inserts
 * (deleting and inserting the same keys cannot share a statement: one
 * snapshot, the insert would collide). Those of new invoices went in with
 * the upsert.
 */
async function rewriteLines(trx: Transaction<Database>, edited: Latest[]): Promise<void> {
  const ids = edited.map((l) => l.invoice.id);
  await sql`
    with taxes as (delete from invoice_tax_breakdown where invoice_id = any(${ids}::uuid[]))
    delete from invoice_lines where invoice_id = any(${ids}::uuid[])`.execute(trx);
  await trx.executeQuery(INSERT_LINES(lineValues(edited)));
}

const INSERT_LINES = compiledOnce((v: BatchValues) => {
  const source = lineSources(v);
  return sql`
    with lines as (
      insert into invoice_lines (invoice_id, organization_id, position, description, quantity, unit_price, tax_rate, total)
      select * from ${source.lines})
    insert into invoice_tax_breakdown (invoice_id, organization_id, rate, taxable_amount, tax_amount)
    select * from ${source.taxes}`;
});

export const invoicesProjector: Projector = {
  name: 'invoices',
  handles: INVOICE_EVENT_TYPES,
  tables: ['invoices', 'invoice_lines', 'invoice_tax_breakdown', 'invoice_status_counts', 'invoice_issue_month_counts'],
  opening(events, literal) {
    const ids = new Set(events.map((e) => (e as unknown as InvoiceEvent).data.invoice.id));
    return ids.size === 0 ? null : lockText([...ids], literal);
  },
  statements(events, literal) {
    // Every batch but an edit's: no stored lines to replace (only InvoiceUpdated changes the lines of a row
    // already there), so the upsert's only follow-up is the deletion of the month counts it brought to zero
    // (never for a batch of creations), which the upsert notes for the statement after it. The lock comes
    // first, as opening() would send it. Rows already newer (a retried or replayed event) are left as they
    // are by the version guard and move nothing.
    if (events.length === 0 || events.some((e) => e.type === 'InvoiceUpdated')) return null;
    const latest = newestPerInvoice(events);
    const statements = [{ text: inlineLockText(latest.map((l) => l.invoice.id), literal) }, preparedStatement(upsertStatement(upsertValues(latest)), literal)];
    if (latest.some((l) => !l.created)) statements.push(preparedStatement(DELETE_EMPTIED_MONTHS({}), literal));
    return statements;
  },
  async apply(events: RecordedEvent[], trx: Transaction<Database>, options: ApplyOptions = {}): Promise<void> {
    const latest = newestPerInvoice(events);
    if (latest.length === 0) return;
    const moved = new Map((await upsertInvoices(trx, latest, options.opened ?? false)).map((r) => [r.id, r.existed]));
    const edited = latest.filter((l) => l.linesChanged && moved.get(l.invoice.id) === true);
    if (edited.length > 0) await rewriteLines(trx, edited);
  },
};
