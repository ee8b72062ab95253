/**
 * Read model `invoice_numbers`: one row per InvoiceNumberAssigned, the audit
 * of numbering continuity (docs/api-decisions.md "Official numbers"). An analyst checks "no gap,
 * no duplicate" with one query:
 *
 *   select organization_id, year, count(*), max(sequence) from invoice_numbers
 *    group by 1, 2 having count(*) <> max(sequence);
 *
 * Rows are keyed by (organization, year, sequence), so a batch applied twice
 * inserts nothing new; the unique invoice_id makes a second number for one
 * invoice stop the projector instead of passing silently.
 *
 * Table: invoice_numbers (migration 0006; types src/db/tables/invoices.ts).
 * No endpoint reads it: it is for analysts and audits. Inline all the same
 * (src/read-models.ts): a number's row commits with the number, in the
 * finalize's own message, which costs one statement there instead of a
 * runner's transaction of five after it; and a second number for one
 * invoice then refuses the write that would give it (a 500 and the alert),
 * instead of stopping the projector after the fact.
 */
import { sql, type Transaction } from 'kysely';
import type { InvoiceNumberAssigned } from '../commands/invoicenumber/decider.ts';
import type { RecordedEvent } from '../eventstore/types.ts';
import { compiledOnce, preparedStatement } from './inline-statements.ts';
import type { Projector } from './projector.ts';
import type { Database } from '../db/schema.ts';

/** `invoicenumbers-<organization uuid>-<year>`: the organization is in the stream name too. */
function organizationOf(e: Pick<RecordedEvent, 'stream' | 'metadata'>): string {
  const fromMetadata = e.metadata.organization_id;
  return fromMetadata ?? e.stream.slice('invoicenumbers-'.length, -'-YYYY'.length);
}

type Values = Record<'organization_id' | 'year' | 'sequence' | 'number' | 'invoice_id' | 'assigned_at', unknown[]>;

/** One array per column, one element per InvoiceNumberAssigned. */
function values(events: readonly Pick<RecordedEvent, 'stream' | 'data' | 'metadata'>[]): Values {
  const data = events.map((e) => (e as unknown as InvoiceNumberAssigned).data);
  return {
    organization_id: events.map(organizationOf),
    year: data.map((d) => d.year),
    sequence: data.map((d) => d.sequence),
    number: data.map((d) => d.number),
    invoice_id: data.map((d) => d.invoice_id),
    assigned_at: events.map((e) => e.metadata.occurred_at),
  };
}

/** The one statement of a batch, compiled once (inline-statements.ts): its text is the same for any batch. */
const INSERT = compiledOnce(
  (v: Values) => sql`
    insert into invoice_numbers (organization_id, year, sequence, number, invoice_id, assigned_at)
    select * from unnest(${v.organization_id}::uuid[], ${v.year}::int[], ${v.sequence}::int[],
                         ${v.number}::text[], ${v.invoice_id}::uuid[], ${v.assigned_at}::timestamptz[])
    on conflict (organization_id, year, sequence) do nothing`,
);

export const invoiceNumbersProjector: Projector = {
  name: 'invoice-numbers',
  handles: ['InvoiceNumberAssigned'],
  tables: ['invoice_numbers'],
  // Inline (src/read-models.ts), its insert rides in the finalize's own message: no runner transaction per number.
  statements: (events, literal) => [preparedStatement(INSERT(values(events)), literal)],
  async apply(events: RecordedEvent[], trx: Transaction<Database>): Promise<void> {
    await trx.executeQuery(INSERT(values(events)));
  },
};
