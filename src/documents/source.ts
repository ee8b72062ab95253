/**
 * What a document shows: the issued invoice (its lines and totals exactly as
 * the API serves them, from the one totals code) and the seller as it was
 * when the invoice was issued. The buyer is already frozen on the invoice at
 * finalize; the seller is read from the organization's own event stream,
 * as of the finalization, so that an address or RC changed later never
 * rewrites an invoice already handed out (and a cached PDF keyed by the
 * invoice's version stays right).
 */
import type { OrganizationProfile } from '../commands/organization/events.ts';
import { organizationStream, type Organization } from '../commands/organization/events.ts';
import type { EventStore } from '../eventstore/types.ts';
import { getInvoice } from '../queries/invoices.ts';
import type { InvoiceView } from '../queries/invoice-rows.ts';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import { findOrganization } from '../queries/organizations.ts';

export type Seller = OrganizationProfile;

export interface DocumentSource {
  invoice: InvoiceView;
  seller: Seller;
}

/** The organization as of `at` (ISO instant): its newest event at or before it (else its first). */
export async function sellerAsOf(store: EventStore, organizationId: string, at: string): Promise<Seller | null> {
  const events = await store.readStream(organizationStream(organizationId));
  let chosen: Organization | null = null;
  for (const e of events) {
    const organization = (e.data as { organization?: Organization }).organization;
    if (!organization) continue;
    if (chosen !== null && e.metadata.occurred_at > at) break;
    chosen = organization;
  }
  return chosen ? profileOf(chosen) : null;
}

function profileOf(o: Seller): Seller {
  const { legal_name, ice, rc, if_number, vat_number, phone, email, website, billing_address } = o;
  return { legal_name, ice, rc, if_number, vat_number, phone, email, website, billing_address };
}

/**
 * The invoice and its seller, or null when the invoice is not this
 * organization's. Drafts are returned too: the caller answers
 * PDF_NOT_AVAILABLE / XML_NOT_AVAILABLE for them.
 */
export async function loadDocumentSource(
  deps: { pool: pg.Pool; db: Kysely<any>; store: EventStore },
  organizationId: string,
  invoiceId: string,
): Promise<DocumentSource | null> {
  const invoice = await getInvoice(deps.pool, organizationId, invoiceId);
  if (!invoice) return null;
  if (invoice.status === 'draft') return { invoice, seller: emptySeller() };
  // An organization without events (rows written by an import or a test) is read from its read model.
  const seller = (await sellerAsOf(deps.store, organizationId, invoice.finalized_at ?? invoice.updated_at)) ?? (await findOrganization(deps.db, organizationId));
  return { invoice, seller: seller ? profileOf(seller) : emptySeller() };
}

function emptySeller(): Seller {
  return {
    legal_name: '', ice: null, rc: null, if_number: null, vat_number: null, phone: null, email: null, website: null,
    billing_address: { street: null, city: null, postal_code: null, country: 'MA' },
  };
}
