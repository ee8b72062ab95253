/**
 * The read-model implementation of the InvoiceFacts port
 * (src/commands/invoice/facts.ts), tenant-scoped: the customer snapshot
 * (customers) and the seller's legal name and ICE (organizations).
 *
 * Read models are enough here: writes to customers and organizations answer
 * only once projected (read your writes), and the finalize rules only need
 * the state a client could have seen.
 */
import type pg from 'pg';
import { isUuid } from '../shared/ids.ts';
import type { InvoiceFacts } from '../commands/invoice/facts.ts';
import { customerSnapshot } from './customers.ts';

export type { InvoiceFacts };

/** Named statements (planned once per connection): every create reads a customer, every finalize its seller too. */
export function readModelFacts(pool: pg.Pool): InvoiceFacts {
  return {
    async customer(organizationId, customerId) {
      if (!isUuid(customerId)) return null;
      return customerSnapshot(pool, organizationId, customerId.toLowerCase());
    },
    async organization(organizationId) {
      const { rows } = await pool.query({ name: 'organizations.facts', text: 'select legal_name, ice from organizations where id = $1', values: [organizationId] });
      return { legal_name: rows[0]?.legal_name ?? null, ice: rows[0]?.ice ?? null };
    },
  };
}
