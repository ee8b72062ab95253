/**
 * Every read-model projector of the service, in one list: the composition
 * root (src/main.ts) runs them, and the admin CLI imports this list alone
 * (not main.ts, which would load every route and web app at each command).
 * A new read model adds its projector here, one line; `inline(...)` when
 * writes answer from it (docs/architecture.md "Inline projections").
 */
import { customersProjector } from './projections/customers.ts';
import { invoiceNumbersProjector } from './projections/invoice-numbers.ts';
import { invoicesProjector } from './projections/invoices.ts';
import { organizationsProjector } from './projections/organizations.ts';
import type { Projector } from './projections/projector.ts';
import { schedulesProjector } from './projections/schedules.ts';

/** Inline on the PostgreSQL event store: rows written in the append's transaction (src/projections/inline.ts). */
const inline = (p: Projector): Projector => ({ ...p, inline: true });

export const readModelProjectors: readonly Projector[] = [
  inline(customersProjector),
  inline(invoicesProjector),
  inline(invoiceNumbersProjector), // no write answers from it: inline for its cost (one statement in the finalize's message)
  inline(organizationsProjector),
  inline(schedulesProjector),
];
