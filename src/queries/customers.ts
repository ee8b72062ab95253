/**
 * Reads of the customers read model (every GET and list, and the responses
 * of writes once the projector has caught up). Every query is scoped by
 * organization: a customer of another organization is simply not found.
 *
 * For other features: customerSnapshot() is the customer as an invoice needs
 * it (InvoiceCustomer), or null when the id names no customer of that
 * organization.
 */
import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { Customer, CustomerStatus, CustomerType } from '../commands/customer/events.ts';
import type { InvoiceCustomer } from '../commands/invoice/commands.ts';
import { containsPattern } from '../shared/search.ts';
import { isoOrNull as iso } from '../shared/time.ts';
import type { Database } from '../db/schema.ts';

const PUBLIC_COLUMNS = [
  'id', 'name', 'type', 'ice', 'legal_name', 'rc', 'email', 'phone',
  'address_street', 'address_city', 'address_postal_code', 'address_country',
  'notes', 'tags', 'status', 'archived_at', 'created_at', 'updated_at', 'version',
] as const;

/** The address of a customers row (its columns named `<prefix>address_<part>`). */
function addressOfRow(row: Record<string, any>, prefix = ''): Customer['address'] {
  return { street: row[`${prefix}address_street`], city: row[`${prefix}address_city`], postal_code: row[`${prefix}address_postal_code`], country: row[`${prefix}address_country`] };
}

/** A customers row as the docs/api-decisions.md "Representations" representation. */
export function toCustomer(row: Record<string, any>): Customer {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    ice: row.ice,
    legal_name: row.legal_name,
    rc: row.rc,
    email: row.email,
    phone: row.phone,
    address: addressOfRow(row),
    notes: row.notes,
    tags: row.tags ?? [],
    status: row.status,
    archived_at: iso(row.archived_at),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    version: row.version,
  };
}

/**
 * By primary key alone, the organization checked on the row: with both in the
 * WHERE clause the planner may pick an (organization_id, ...) index and walk
 * every customer of the organization (it did, with fresh statistics). A
 * named statement, planned once per connection: every invoice created or
 * finalized reads its customer (docs/performance.md
 * "Writes: group commit, fewer statements, less Node per write").
 */
const GET_SQL = `select ${[...PUBLIC_COLUMNS, 'organization_id'].join(', ')} from customers where id = $1`;

async function customerRow(pool: pg.Pool, customerId: string): Promise<Record<string, any> | undefined> {
  return (await pool.query({ name: 'customers.get', text: GET_SQL, values: [customerId] })).rows[0];
}

export async function getCustomer(pool: pg.Pool, organizationId: string, customerId: string): Promise<Customer | null> {
  const row = await customerRow(pool, customerId);
  return row && row.organization_id === organizationId ? toCustomer(row) : null;
}

/** The customer facts an invoice records (id, name, type, ice, email, phone, address, status). */
export async function customerSnapshot(pool: pg.Pool, organizationId: string, customerId: string): Promise<InvoiceCustomer | null> {
  const row = await customerRow(pool, customerId);
  const found = row && snapshotOfRow(row);
  return found && found.organizationId === organizationId ? found.snapshot : null;
}

/** The columns of an invoice's customer snapshot and its organization. */
const SNAPSHOT_COLUMNS = ['id', 'name', 'type', 'ice', 'email', 'phone', 'address_street', 'address_city', 'address_postal_code', 'address_country', 'status', 'organization_id'] as const;

/**
 * A snapshot's columns of the customers row `alias`, each named `<prefix><column>`: for a statement that
 * reads a customer beside other things (the key's, src/api/pipeline/prefetch.ts), read back by snapshotOfRow.
 */
export function snapshotColumns(alias: string, prefix: string): string {
  return SNAPSHOT_COLUMNS.map((c) => `${alias}.${c} as ${prefix}${c}`).join(', ');
}

/** The snapshot an invoice records, and the customer's organization, from a row with the snapshot's columns (prefixed). */
export function snapshotOfRow(row: Record<string, any>, prefix = ''): { organizationId: string; snapshot: InvoiceCustomer } {
  const c = (name: (typeof SNAPSHOT_COLUMNS)[number]) => row[prefix + name];
  return {
    organizationId: c('organization_id'),
    snapshot: {
      id: c('id'),
      name: c('name'),
      type: c('type'),
      ice: c('ice'),
      email: c('email'),
      phone: c('phone'),
      address: addressOfRow(row, prefix),
      status: c('status'),
    },
  };
}

export interface CustomerListQuery {
  page: number;
  per_page: number;
  order: 'asc' | 'desc';
  /** Case- and accent-insensitive substring of name, email or ICE. */
  search?: string;
  type?: CustomerType;
  status?: CustomerStatus;
}

export interface CustomerPage {
  data: Customer[];
  total: number;
}

export async function listCustomers(db: Kysely<Database>, organizationId: string, q: CustomerListQuery): Promise<CustomerPage> {
  const pattern = containsPattern(q.search);
  const filtered = (executor: Kysely<Database>) => {
    let query = executor.selectFrom('customers').where('organization_id', '=', organizationId);
    if (q.type) query = query.where('type', '=', q.type);
    if (q.status) query = query.where('status', '=', q.status);
    if (pattern) query = query.where('search_text', 'like', pattern);
    return query;
  };
  // Both statements on one snapshot, so `total` counts exactly the rows being paged.
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const { total } = await filtered(trx)
        .select((eb) => eb.fn.countAll<string>().as('total'))
        .executeTakeFirstOrThrow();
      const rows = await filtered(trx)
        .select(PUBLIC_COLUMNS)
        .orderBy('created_at', q.order)
        .orderBy('id', q.order)
        .limit(q.per_page)
        .offset((q.page - 1) * q.per_page)
        .execute();
      return { data: rows.map(toCustomer), total: Number(total) };
    });
}
