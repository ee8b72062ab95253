/**
 * Webhook endpoint configuration (`webhook add`, `list`, `rotate-secret`).
 * Secrets are returned only by add and rotate, once; everything else shows
 * the hint. The URL rules are checked here for the operator's benefit and
 * again at every connection (address-guard.ts).
 */
import type { Kysely } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { PUBLIC_EVENT_NAME_LIST } from '../../commands/public-event-names.ts';
import { DomainError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import { isoDateTime } from '../../shared/time.ts';
import { AddressNotAllowedError, checkEndpointUrl, type Resolver } from './address-guard.ts';
import { generateSecret, sealSecret, secretHint } from './secrets.ts';
import { CONVENTIONS, type Convention } from './signing.ts';
import type { Database } from '../../db/schema.ts';

export interface EndpointView {
  id: string;
  organization_id: string;
  url: string;
  events: string[];
  convention: Convention;
  enabled: boolean;
  secret_hint: string;
  created_at: string;
  updated_at: string;
}

export interface NewEndpoint {
  organizationId: string;
  url: string;
  events?: readonly string[];
  convention?: string;
}

const COLUMNS = ['id', 'organization_id', 'url', 'events', 'convention', 'enabled', 'secret_hint', 'created_at', 'updated_at'] as const;

function view(row: any): EndpointView {
  return { ...row, created_at: isoDateTime(row.created_at), updated_at: isoDateTime(row.updated_at) };
}

export function checkId(id: string, what: string): string {
  if (!isUuid(id)) throw new DomainError('NOT_FOUND', `${what} ${id} not found (not a UUID)`);
  return id.toLowerCase();
}

/** The event list of an endpoint: known names only, no repeats, never empty. */
export function parseEvents(events: readonly string[] | undefined): string[] {
  if (events === undefined) return [...PUBLIC_EVENT_NAME_LIST];
  const names = [...new Set(events.map((e) => e.trim()).filter(Boolean))];
  if (names.length === 0) throw new DomainError('VALIDATION_ERROR', 'give at least one event');
  const unknown = names.filter((n) => !(PUBLIC_EVENT_NAME_LIST as readonly string[]).includes(n));
  if (unknown.length) throw new DomainError('VALIDATION_ERROR', `unknown event "${unknown[0]}" (known: ${PUBLIC_EVENT_NAME_LIST.join(', ')})`);
  return names;
}

export async function addEndpoint(
  db: Kysely<Database>,
  input: NewEndpoint,
  options: { allowInsecure: boolean; resolve?: Resolver },
): Promise<{ endpoint: EndpointView; secret: string }> {
  const organizationId = checkId(input.organizationId, 'organization');
  const convention = (input.convention ?? 'A').toUpperCase();
  if (!CONVENTIONS.includes(convention as Convention)) throw new DomainError('VALIDATION_ERROR', `convention "${input.convention}" is not A or B`);
  const events = parseEvents(input.events);
  const org = await db.selectFrom('organizations').select('id').where('id', '=', organizationId).executeTakeFirst();
  if (!org) throw new DomainError('NOT_FOUND', `organization ${organizationId} not found`);
  let url: string;
  try {
    url = await checkEndpointUrl(input.url, options);
  } catch (err) {
    if (err instanceof AddressNotAllowedError) throw new DomainError('VALIDATION_ERROR', `url: ${err.message}`);
    throw err;
  }
  const secret = generateSecret();
  const row = await db
    .insertInto('webhook_endpoints')
    .values({ id: uuidv7(), organization_id: organizationId, url, events, convention: convention as Convention, secret: sealSecret(secret), secret_hint: secretHint(secret) })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
  return { endpoint: view(row), secret };
}

export async function listEndpoints(db: Kysely<Database>, organizationId: string): Promise<EndpointView[]> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .select(COLUMNS)
    .where('organization_id', '=', checkId(organizationId, 'organization'))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(view);
}

/** A new secret, effective from the next attempt (the old one stops at once). */
export async function rotateSecret(db: Kysely<Database>, id: string): Promise<{ endpoint: EndpointView; secret: string }> {
  const secret = generateSecret();
  const row = await db
    .updateTable('webhook_endpoints')
    .set({ secret: sealSecret(secret), secret_hint: secretHint(secret), updated_at: new Date() })
    .where('id', '=', checkId(id, 'endpoint'))
    .returning(COLUMNS)
    .executeTakeFirst();
  if (!row) throw new DomainError('NOT_FOUND', `endpoint ${id} not found`);
  return { endpoint: view(row), secret };
}

export interface EndpointChanges {
  events?: readonly string[];
  convention?: string;
  enabled?: boolean;
}

/**
 * Changes an endpoint's events, convention or enabled switch (the URL is
 * not editable: a new address is a new endpoint with its own secret). A
 * disabled endpoint gets no new deliveries; those already created still run.
 */
export async function updateEndpoint(db: Kysely<any>, id: string, changes: EndpointChanges): Promise<EndpointView> {
  const set: Record<string, unknown> = { updated_at: new Date() };
  if (changes.events !== undefined) set.events = parseEvents(changes.events);
  if (changes.convention !== undefined) {
    const convention = changes.convention.toUpperCase();
    if (!CONVENTIONS.includes(convention as Convention)) throw new DomainError('VALIDATION_ERROR', `convention "${changes.convention}" is not A or B`);
    set.convention = convention;
  }
  if (changes.enabled !== undefined) set.enabled = changes.enabled;
  const row = await db.updateTable('webhook_endpoints').set(set).where('id', '=', checkId(id, 'endpoint')).returning(COLUMNS).executeTakeFirst();
  if (!row) throw new DomainError('NOT_FOUND', `endpoint ${id} not found`);
  return view(row);
}

/** Deletes an endpoint with its deliveries and their attempts (foreign keys cascade). */
export async function deleteEndpoint(db: Kysely<any>, id: string): Promise<void> {
  const result = await db.deleteFrom('webhook_endpoints').where('id', '=', checkId(id, 'endpoint')).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw new DomainError('NOT_FOUND', `endpoint ${id} not found`);
}
