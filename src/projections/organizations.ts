/**
 * Read model `organizations`: one row per organization stream. Every event
 * carries the whole organization, so a row is an upsert of the newest
 * snapshot; the version guard makes a batch applied twice (or out of date)
 * change nothing.
 */
import { sql, type Transaction } from 'kysely';
import type { Organization, OrganizationEvent } from '../commands/organization/events.ts';
import { ORGANIZATION_EVENT_TYPES } from '../commands/organization/events.ts';
import type { RecordedEvent } from '../eventstore/types.ts';
import type { Projector } from './projector.ts';
import type { Database } from '../db/schema.ts';

function row(o: Organization) {
  return {
    id: o.id,
    account_id: o.account_id,
    legal_name: o.legal_name,
    ice: o.ice,
    rc: o.rc,
    if_number: o.if_number,
    vat_number: o.vat_number,
    phone: o.phone,
    email: o.email,
    website: o.website,
    billing_address: JSON.stringify(o.billing_address),
    api_enabled: o.api_enabled,
    archived: o.archived,
    archived_at: o.archived_at,
    created_at: o.created_at,
    updated_at: o.updated_at,
    version: o.version,
  };
}

/** Only the newest snapshot of each organization in the batch needs writing. */
function newestPerOrganization(events: RecordedEvent[]): Organization[] {
  const newest = new Map<string, Organization>();
  for (const e of events) {
    const { organization } = (e as unknown as OrganizationEvent).data;
    const known = newest.get(organization.id);
    if (!known || known.version < organization.version) newest.set(organization.id, organization);
  }
  return [...newest.values()];
}

export const organizationsProjector: Projector = {
  name: 'organizations',
  handles: ORGANIZATION_EVENT_TYPES,
  tables: ['organizations'],
  async apply(events: RecordedEvent[], trx: Transaction<Database>): Promise<void> {
    const rows = newestPerOrganization(events).map(row);
    if (rows.length === 0) return;
    await trx
      .insertInto('organizations')
      .values(rows)
      .onConflict((oc) =>
        oc
          .column('id')
          .doUpdateSet((eb) => {
            const columns = Object.keys(rows[0]).filter((c) => c !== 'id') as (keyof (typeof rows)[0])[];
            return Object.fromEntries(columns.map((c) => [c, eb.ref(`excluded.${c}`)]));
          })
          .where(sql<boolean>`organizations.version < excluded.version`),
      )
      .execute();
  },
};
