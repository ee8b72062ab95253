/**
 * The port through which invoice commands get facts owned by other
 * aggregates: the customer snapshot and the seller's legal name and ICE.
 * Deciders cannot read them, so a handler reads them once, at its entry,
 * and puts them in the command. The read-model implementation is
 * src/queries/invoice-facts.ts (the composition passes it in), so commands/
 * never imports queries/.
 */
import type { InvoiceCustomer, OrganizationFacts } from './commands.ts';

export interface InvoiceFacts {
  /** The customer of this organization, or null (unknown id, other organization, not a UUID). */
  customer(organizationId: string, customerId: unknown): Promise<InvoiceCustomer | null>;
  organization(organizationId: string): Promise<OrganizationFacts>;
}
