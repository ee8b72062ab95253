/**
 * Facts a write will read, fetched by the authentication statement itself
 * (authenticate.ts): one round trip fewer on the write's path. A lone write
 * pays each round trip to PostgreSQL whole, its wake-ups included (about
 * 0.3 ms here, against 15 us to run a customer's read: docs/performance.md
 * "Reads that ride with the key's").
 *
 * A route names what it will read (RouteSpec.prefetch): the customer its body
 * names (an invoice's create and update, a schedule's create). The id is a
 * hint taken from the request before it is validated, and the row is read by
 * id alone; what was fetched is used only where the handler asks for that
 * very id, and the organization is checked on the row as the customer read
 * checks it (src/queries/customers.ts), so a wrong hint costs the read it
 * would have made anyway and never shows another organization's row. The
 * seller's legal name and ICE come with an organization key's own
 * organization (the facts a finalize checks).
 *
 * A command on one invoice (finalize, send, pay, void, an edit) names it
 * in its path: the statement brings the invoice's stream
 * (src/eventstore/stream-rider.ts), which the command's first read of it is
 * answered with, and the customer the invoice's row names (which a finalize
 * freezes as the buyer), or for an edit the one its body names. Both come
 * from the one statement, so from one snapshot: the buyer the finalize
 * freezes is never older than a customer change made before the invoice's
 * last edit it decides on (a client that renames a customer, then edits
 * the draft, then finalizes gets the new name). A customer read before the
 * stream, in an earlier statement, could be older; so the customer alone is
 * never fetched for a finalize. The invoice's row is a hint too: where the
 * stream names another customer (a read model behind its log,
 * INLINE_PROJECTIONS=false), the finalize reads that one. The stream only
 * with the PostgreSQL event store, whose events are in the same database
 * (with EventStoreDB an edit still gets its named customer, as a create).
 *
 * Fetched facts are as old as the request: a request that waited for another
 * attempt of its Idempotency-Key drops them (src/api/pipeline/index.ts) and
 * its handler reads afresh.
 */
import type { Request } from 'express';
import type { InvoiceCustomer, OrganizationFacts } from '../../commands/invoice/commands.ts';
import { invoiceStream } from '../../commands/invoice/events.ts';
import type { RecordedEvent } from '../../eventstore/types.ts';
import { streamRiderEvents } from '../../eventstore/stream-rider.ts';
import type { InvoiceFacts } from '../../commands/invoice/facts.ts';
import { snapshotColumns, snapshotOfRow } from '../../queries/customers.ts';
import { readModelFacts } from '../../queries/invoice-facts.ts';
import type { RequestContext } from '../route.ts';
import { rawBody } from '../body.ts';
import { isUuid } from '../../shared/ids.ts';

/**
 * What a route will read: the customer named in its body; the invoice named in its path (its stream, and the
 * customer its row names); or both (an edit: its stream, and the customer its body names, if any).
 */
export type PrefetchKind = 'customer-of-body' | 'invoice-of-path' | 'invoice-of-path+customer-of-body';

/**
 * The customer or the invoice to fetch beside the key (ids: UUIDs in lower case), or none. An invoice's
 * `customerId`: the customer its body names, fetched instead of the one the invoice's row names.
 */
export type PrefetchHint = { kind: 'customer'; id: string } | { kind: 'invoice'; id: string; customerId?: string } | null;

/** What the authentication statement brought back beside the key. */
export interface Prefetched {
  /** The organization key's organization: its seller facts (legal name, ICE). */
  organization?: { id: string; facts: OrganizationFacts };
  /** The customer fetched by id: its organization and snapshot, or null when no customer has that id. Absent without a hint. */
  customer?: { id: string; organizationId: string; snapshot: InvoiceCustomer } | { id: string; organizationId: null; snapshot: null };
  /** The invoice's stream, as the statement read it: what the command's first read of it answers (stream-rider.ts). */
  stream?: { name: string; events: RecordedEvent[] };
}

const CUSTOMER_ID = Buffer.from('"customer_id"');
const UUID_AFTER = /^\s*:\s*"([0-9A-Fa-f-]{36})"/;

/**
 * The hint of a route: the invoice's id in its path, and the UUID string that follows the first
 * `"customer_id"` in its raw body (none when that first one is not followed by a UUID string). Never throws
 * (the request is not validated yet).
 */
export function prefetchHint(kind: PrefetchKind | undefined, req: Request): PrefetchHint {
  if (kind === 'customer-of-body') {
    const id = customerOfBody(req);
    return id === null ? null : { kind: 'customer', id };
  }
  if (kind !== 'invoice-of-path' && kind !== 'invoice-of-path+customer-of-body') return null;
  const id = req.params.id;
  // Lower case, as validation gives the handler its path's ids: the stream it reads is named after that (invoiceStream).
  if (typeof id !== 'string' || !isUuid(id)) return null;
  const customerId = kind === 'invoice-of-path+customer-of-body' ? customerOfBody(req) : null;
  return customerId === null ? { kind: 'invoice', id: id.toLowerCase() } : { kind: 'invoice', id: id.toLowerCase(), customerId };
}

/** The UUID string after the first `"customer_id"` of the raw body, in lower case, or null. */
function customerOfBody(req: Request): string | null {
  // A scan of the raw bytes, not a parse: the body is parsed after authentication (the order of checks), and
  // a hint that is wrong (a nested "customer_id", a second one the parser would refuse) costs only the read.
  const raw = rawBody(req);
  const at = raw.indexOf(CUSTOMER_ID);
  if (at < 0) return null;
  const m = UUID_AFTER.exec(raw.subarray(at + CUSTOMER_ID.length, at + CUSTOMER_ID.length + 80).toString('latin1'));
  return m && isUuid(m[1]) ? m[1].toLowerCase() : null;
}

/**
 * The CTE (named `fetched`, one row or none) the authentication statement adds for a hint: the customer whose
 * id `idSql` gives (the statement's parameter, or the customer an invoice's row names); its columns are prefixed `c_`.
 */
export function prefetchCte(idSql: string): string {
  return `fetched as (select ${snapshotColumns('c', 'c_')} from customers c where c.id = ${idSql})`;
}

/**
 * The customer id of an invoice hint's statement: the one its body names (the parameter `$named`, null for
 * none), else the one the invoice's row names (the invoice's id the parameter `$invoice`).
 */
export const customerOfInvoice = (named: number, invoice: number) =>
  `coalesce($${named}::uuid, (select i.customer_id from invoices i where i.id = $${invoice}::uuid))`;

/** What the statement's rows (those of a key that authenticated: one per event of a fetched stream) say, for this hint. */
export function prefetchedOf(hint: PrefetchHint, rows: readonly Record<string, any>[]): Prefetched {
  const row = rows[0];
  const prefetched: Prefetched = {};
  if (row.kind === 'organization') {
    prefetched.organization = { id: row.organization_id, facts: { legal_name: row.org_legal_name ?? null, ice: row.org_ice ?? null } };
  }
  const fetched = row.c_id ? { id: row.c_id as string, ...snapshotOfRow(row, 'c_') } : null;
  // A customer named by id (the body's): no row is the answer "no such customer", as its read would say.
  const named = (id: string) => fetched ?? { id, organizationId: null, snapshot: null };
  if (hint?.kind === 'customer') {
    prefetched.customer = named(hint.id);
  } else if (hint?.kind === 'invoice') {
    const events = streamRiderEvents(rows);
    prefetched.stream = { name: invoiceStream(hint.id), events };
    if (hint.customerId !== undefined) prefetched.customer = named(hint.customerId);
    // The customer the invoice's row names only with the stream it was read beside: never older than a stream the
    // handler reads later. None fetched says nothing of the one the stream names (a read model behind its log):
    // that one is read.
    else if (fetched && events.length > 0) prefetched.customer = fetched;
  }
  return prefetched;
}

/**
 * `facts`, answering from what was fetched where it names the same row: the customer of that id (of this
 * organization, else none, as the read would say) and the key's own organization.
 */
export function withPrefetched(facts: InvoiceFacts, prefetched: Prefetched): InvoiceFacts {
  const { customer, organization } = prefetched;
  if (!customer && !organization) return facts;
  return {
    customer: async (organizationId, customerId) =>
      customer && typeof customerId === 'string' && customerId.toLowerCase() === customer.id
        ? customer.organizationId === organizationId ? customer.snapshot : null
        : facts.customer(organizationId, customerId),
    organization: async (organizationId) => (organization?.id === organizationId ? organization.facts : facts.organization(organizationId)),
  };
}

/** The facts a request's handler reads: the read models, answered first from what its key's statement fetched. */
export function requestFacts(ctx: RequestContext): InvoiceFacts {
  return withPrefetched(readModelFacts(ctx.rt.database.pool), ctx.prefetched);
}
