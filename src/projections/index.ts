/**
 * Every read-model projector, in one list: the runner starts them, waitFor
 * waits for all of them, the CLI rebuilds them by name.
 * (The webhook subscriber is a log consumer too, but not a read model: writes
 * do not wait for it.)
 */
import { customersProjector } from './customers.ts';
import { invoiceNumbersProjector } from './invoice-numbers.ts';
import { invoicesProjector } from './invoices.ts';
import { organizationsProjector } from './organizations.ts';
import type { Projector } from './projector.ts';
import { schedulesProjector } from './schedules.ts';

export const projectors: Projector[] = [
  customersProjector,
  invoicesProjector,
  invoiceNumbersProjector,
  organizationsProjector,
  schedulesProjector,
];

export function projectorNamed(name: string): Projector | undefined {
  return projectors.find((p) => p.name === name);
}
