/**
 * customers read model. Every customer event carries the full customer as of
 * that event (docs/events.md, snapshot rule), so applying an event is one
 * upsert of that snapshot: no read, no merge. The organization comes from the
 * event metadata (the representation does not name it).
 *
 * Idempotent and order-safe: a row is only replaced by a snapshot of the same
 * or a newer version, so a batch delivered twice, or an old event replayed
 * after a newer one, leaves the row as the newest event made it.
 */
import { sql, type Insertable, type Transaction } from 'kysely';
import { CUSTOMER_EVENT_TYPES, type Customer } from '../commands/customer/events.ts';
import type { RecordedEvent } from '../eventstore/types.ts';
import { searchText } from '../shared/search.ts';
import type { Projector } from './projector.ts';
import type { Database } from '../db/schema.ts';
import type { CustomersTable } from '../db/tables/customers.ts';

/** A customers row as the projector writes it. */
export type CustomerRow = Insertable<CustomersTable>;

export function customerRow(organizationId: string, c: Customer): CustomerRow {
  return {
    id: c.id,
    organization_id: organizationId,
    name: c.name,
    type: c.type,
    ice: c.ice,
    legal_name: c.legal_name,
    rc: c.rc,
    email: c.email,
    phone: c.phone,
    address_street: c.address.street,
    address_city: c.address.city,
    address_postal_code: c.address.postal_code,
    address_country: c.address.country,
    notes: c.notes,
    tags: c.tags,
    status: c.status,
    archived_at: c.archived_at,
    created_at: c.created_at,
    updated_at: c.updated_at,
    version: c.version,
    search_text: searchText([c.name, c.email, c.ice]),
  };
}

/** The newest snapshot per customer in a batch (one INSERT cannot touch a row twice). */
function latestRows(events: RecordedEvent[]): CustomerRow[] {
  const rows = new Map<string, CustomerRow>();
  for (const e of events) {
    const customer = (e.data as { customer?: Customer }).customer;
    const organizationId = e.metadata.organization_id;
    // Every customer event is written with both (src/commands/customer/handler.ts);
    // failing loudly stops the projector on the event instead of inventing a tenant.
    if (!customer || !organizationId) throw new Error(`${e.type} ${e.id} lacks data.customer or metadata.organization_id`);
    const known = rows.get(customer.id);
    if (!known || known.version <= customer.version) rows.set(customer.id, customerRow(organizationId, customer));
  }
  return [...rows.values()];
}

const UPDATED_COLUMNS = [
  'name', 'type', 'ice', 'legal_name', 'rc', 'email', 'phone',
  'address_street', 'address_city', 'address_postal_code', 'address_country',
  'notes', 'tags', 'status', 'archived_at', 'created_at', 'updated_at', 'version', 'search_text',
] as const;

export const customersProjector: Projector = {
  name: 'customers',
  handles: CUSTOMER_EVENT_TYPES,
  tables: ['customers'],
  async apply(events, trx: Transaction<Database>) {
    const rows = latestRows(events);
    if (rows.length === 0) return;
    await trx
      .insertInto('customers') // unqualified: a rebuild points search_path at its shadow schema
      .values(rows)
      .onConflict((oc) =>
        oc
          .column('id')
          .doUpdateSet(Object.fromEntries(UPDATED_COLUMNS.map((c) => [c, sql.ref(`excluded.${c}`)])))
          // The organization never changes; the version guard makes replays harmless.
          .where('customers.version', '<=', sql.ref<number>('excluded.version')),
      )
      .execute();
  },
};
