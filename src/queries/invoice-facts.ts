/**
 * The read-model implementation of the InvoiceFacts port
 * (src/commands/invoice/facts.ts), tenant-scoped: the customer snapshot
 * (customers) and the seller's legal name and ICE (organizations).
 *
 * Read models are enough here: writes to customers and organizations answer
 * only once projected (read your writes), and the finalize rules only need
 * the state a client could have seen.
 */
import type { Kysely } from 'kysely';
import { isUuid } from '../shared/ids.ts';
import type { InvoiceFacts } from '../commands/invoice/facts.ts';
import { customerSnapshot } from './customers.ts';
import type { Database } from '../db/schema.ts';

export type { InvoiceFacts };

export function readModelFacts(db: Kysely<Database>): InvoiceFacts {
  return {
    async customer(organizationId, customerId) {
      if (!isUuid(customerId)) return null;
      return customerSnapshot(db, organizationId, customerId.toLowerCase());
    },
    async organization(organizationId) {
      const row = await db
        .selectFrom('organizations')
        .select(['legal_name', 'ice'])
        .where('id', '=', organizationId)
        .executeTakeFirst();
      return { legal_name: row?.legal_name ?? null, ice: row?.ice ?? null };
    },
  };
}
