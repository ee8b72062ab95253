/**
 * The facts invoice commands need from other aggregates, read from their read
 * models (tenant-scoped): the customer snapshot (customers) and the seller's
 * legal name and ICE (organizations). The deciders cannot read them, so the
 * handler puts them in the command (src/commands/invoice/commands.ts).
 *
 * Read models are enough here: writes to customers and organizations answer
 * only once projected (read your writes), and the finalize rules only need
 * the state a client could have seen.
 */
import type { Kysely } from 'kysely';
import { UUID } from '../accounts/accounts.ts';
import type { InvoiceCustomer, OrganizationFacts } from '../commands/invoice/commands.ts';
import { customerSnapshot } from './customers.ts';

export interface InvoiceFacts {
  /** The customer of this organization, or null (unknown id, other organization, not a UUID). */
  customer(organizationId: string, customerId: unknown): Promise<InvoiceCustomer | null>;
  organization(organizationId: string): Promise<OrganizationFacts>;
}

export function readModelFacts(db: Kysely<any>): InvoiceFacts {
  return {
    async customer(organizationId, customerId) {
      if (typeof customerId !== 'string' || !UUID.test(customerId)) return null;
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
