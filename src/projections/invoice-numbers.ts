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
 */
import { sql, type Transaction } from 'kysely';
import type { InvoiceNumberAssigned } from '../commands/invoicenumber/decider.ts';
import type { RecordedEvent } from '../eventstore/types.ts';
import type { Projector } from './projector.ts';
import type { Database } from '../db/schema.ts';

/** `invoicenumbers-<organization uuid>-<year>`: the organization is in the stream name too. */
function organizationOf(e: RecordedEvent): string {
  const fromMetadata = e.metadata.organization_id;
  return fromMetadata ?? e.stream.slice('invoicenumbers-'.length, -'-YYYY'.length);
}

export const invoiceNumbersProjector: Projector = {
  name: 'invoice-numbers',
  handles: ['InvoiceNumberAssigned'],
  tables: ['invoice_numbers'],
  async apply(events: RecordedEvent[], trx: Transaction<Database>): Promise<void> {
    const rows = events.map((e) => {
      const { data } = e as unknown as InvoiceNumberAssigned;
      return {
        organization_id: organizationOf(e),
        year: data.year,
        sequence: data.sequence,
        number: data.number,
        invoice_id: data.invoice_id,
        assigned_at: e.metadata.occurred_at,
      };
    });
    const col = <K extends keyof (typeof rows)[0]>(k: K) => rows.map((r) => r[k]);
    await sql`
      insert into invoice_numbers (organization_id, year, sequence, number, invoice_id, assigned_at)
      select * from unnest(${col('organization_id')}::uuid[], ${col('year')}::int[], ${col('sequence')}::int[],
                           ${col('number')}::text[], ${col('invoice_id')}::uuid[], ${col('assigned_at')}::timestamptz[])
      on conflict (organization_id, year, sequence) do nothing`.execute(trx);
  },
};
