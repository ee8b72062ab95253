/**
 * Step 1 (docs/api-decisions.md "Keys, plans and quotas"): who is calling. One indexed query finds the
 * key by the SHA-256 of the Bearer secret, with its account and (for an
 * organization key) its organization, so the later checks need no more reads.
 * No answer from a cache: a revoked key fails on the very next request (a write
 * on a remembered key checks it again in its own transaction: remembered.ts).
 *
 * The same statement counts the request in the key's rate-limit window
 * (ratelimit.ts): one round trip for both, which is most of the pipeline's
 * cost per request. Requests with an unknown key are not counted. It also
 * brings the facts the route's write will read (prefetch.ts), and an
 * organization key's seller facts.
 */
import type { Request } from 'express';
import { effectiveSubscriptionStatus, type SubscriptionStatus } from '../../accounts/accounts.ts';
import { hashSecret, modeOfSecret, sameHash, type KeyMode } from '../../accounts/keys.ts';
import type { Runtime } from '../../runtime.ts';
import { DomainError } from '../../shared/errors.ts';
import { requestsPerMinute, type Plan } from '../../accounts/plans.ts';
import { COUNT_REQUEST, windowOf, type RateWindow } from './ratelimit.ts';
import { customerOfInvoice, prefetchCte, prefetchedOf, type Prefetched, type PrefetchHint } from './prefetch.ts';
import { streamRiderJoin } from '../../eventstore/stream-rider.ts';
import { invoiceStream } from '../../commands/invoice/events.ts';
import type { ApiKeyInfo, Scope } from '../route.ts';
import type { KeyMemory } from './remembered.ts';

export interface OrganizationState {
  id: string;
  accountId: string;
  archived: boolean;
  apiEnabled: boolean;
}

export interface Principal {
  key: ApiKeyInfo;
  /** The stored hash of the key's secret (never the secret): what the address limiter remembers (unauthenticated.ts). */
  secretHash: string;
  plan: Plan;
  subscription: SubscriptionStatus;
  requestsPerMinute: number;
  /** The organization of an organization key (null for account keys). */
  keyOrganization: OrganizationState | null;
  /** This request's place in the key's rate-limit window. */
  window: RateWindow;
  /** What the key's statement fetched for the route (prefetch.ts). */
  prefetched: Prefetched;
}

/** What the checks read of a key, its account and its organization: the `caller` CTE's columns (with the secret's hash). */
const CALLER_FACTS = [
  'k.id', 'k.kind', 'k.mode', 'k.account_id', 'k.organization_id', 'k.scopes',
  'a.plan', 'a.subscription_status', 'a.current_period_end', 'a.requests_per_minute',
  'o.account_id as org_account_id', 'o.archived as org_archived', 'o.api_enabled as org_api_enabled',
  'o.legal_name as org_legal_name', 'o.ice as org_ice',
];

/** The hex SHA-256 of values as a row's text (NULL for no row): what tells a remembered row from the row now. */
export const rowDigest = (row: string) => `encode(sha256(convert_to(${row}::text, 'UTF8')), 'hex')`;

/**
 * The CTE `caller`: the key that `which` names, its account and its organization, everything the checks read,
 * and with `digest` their digest, `caller_digest`. A write on a remembered key (remembered.ts) runs it again in
 * its own transaction, by the key's id, and compares digests, so both statements take it from here. The
 * digest leaves the secret's hash out: it goes to PostgreSQL's log with a refused write, where it must not let
 * anyone test a guessed secret (a key's secret never changes: a new one is a new key).
 */
export const callerCte = (which: string, digest: boolean) => `caller as (
    select ${CALLER_FACTS.join(', ')}, k.secret_hash${
      digest ? `, ${rowDigest(`row(${CALLER_FACTS.map((f) => f.split(' as ')[0]).join(', ')})`)} as caller_digest` : ''
    }
      from api_keys k
      join accounts a on a.id = k.account_id
      left join organizations o on o.id = k.organization_id
     where ${which} and k.revoked_at is null
  )`;

/** The key's statement ($1 the secret's hash, $2 now in ms), with what a hint fetches (prefetch.ts). */
function keyQuery(hint: NonNullable<PrefetchHint>['kind'] | null): string {
  const head = `
  with ${callerCte('k.secret_hash = $1', hint === 'customer')}, hit as (${COUNT_REQUEST})`;
  const select = 'select caller.*, hit.points as window_points, hit.expire as window_expire';
  const from = 'from caller left join hit on true';
  // $3 the customer's id; its digest for a write on a remembered key (remembered.ts).
  if (hint === 'customer') return `${head}, ${prefetchCte('$3::uuid')}
  ${select}, fetched.*, ${rowDigest('fetched')} as c_digest
    ${from} left join fetched on true`;
  // $3 the invoice's stream, $4 its id, $5 the customer its body names (or null): a row per event (stream-rider.ts),
  // with the customer on each, the body's or else the one the invoice's row names.
  if (hint === 'invoice') return `${head}, ${prefetchCte(customerOfInvoice(5, 4))}
  ${select}, fetched.*, e_events.*
    ${from} left join fetched on true ${streamRiderJoin('$3')}`;
  return `${head}
  ${select}
    ${from}`;
}

/** Named statements: planned once per connection, not on every request. */
const KEY_STATEMENT = { name: 'pipeline-authenticate', text: keyQuery(null) };
const KEY_STATEMENT_WITH_CUSTOMER = { name: 'pipeline-authenticate+customer', text: keyQuery('customer') };
const KEY_STATEMENT_WITH_INVOICE = { name: 'pipeline-authenticate+invoice', text: keyQuery('invoice') };

/** The key's statement for a hint, with its values. */
function keyStatement(hash: string, hint: PrefetchHint): { name: string; text: string; values: unknown[] } {
  if (hint?.kind === 'customer') return { ...KEY_STATEMENT_WITH_CUSTOMER, values: [hash, Date.now(), hint.id] };
  if (hint?.kind === 'invoice') return { ...KEY_STATEMENT_WITH_INVOICE, values: [hash, Date.now(), invoiceStream(hint.id), hint.id, hint.customerId ?? null] };
  return { ...KEY_STATEMENT, values: [hash, Date.now()] };
}

const MESSAGE = 'Invalid or missing API key. Send it as Authorization: Bearer <key>.';

export function unauthorized(hint?: string): DomainError {
  return new DomainError('UNAUTHORIZED', hint ? `Invalid or missing API key: ${hint}.` : MESSAGE);
}

export function bearerToken(req: Request): string {
  const header = req.headers.authorization;
  if (!header) throw unauthorized();
  // Node keeps the first of several Authorization headers and drops the others: which key acts must not be a guess.
  if (authorizationHeaders(req.rawHeaders) > 1) throw unauthorized('send one Authorization header');
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  if (!m) throw unauthorized('the Authorization header must be "Bearer <key>"');
  return m[1];
}

function authorizationHeaders(raw: string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 13 && raw[i].toLowerCase() === 'authorization') n++;
  return n;
}

/** The request's key as stored: the hash of its Bearer secret, and the mode its prefix says (401 for a malformed or foreign one). */
export function keyOf(rt: Runtime, req: Request): { hash: string; mode: KeyMode } {
  const secret = bearerToken(req);
  const mode = modeOfSecret(secret);
  if (mode === null) throw unauthorized();
  // Test keys never reach live data and the reverse (account keys work in both).
  if (mode !== 'account' && mode !== rt.config.serviceMode) {
    throw unauthorized(`${mode} keys are not accepted by this ${rt.config.serviceMode}-mode server`);
  }
  return { hash: hashSecret(secret), mode };
}

/**
 * `hint`: a row the route's write will read, fetched by the same statement (prefetch.ts). `memory`: keeps
 * what a statement with a hint said, with the digests of its rows (remembered.ts: only a write naming a
 * customer runs on a remembered key), and forgets a key that does not authenticate.
 */
export async function authenticate(rt: Runtime, req: Request, hint: PrefetchHint = null, memory?: KeyMemory): Promise<Principal> {
  const { hash, mode } = keyOf(rt, req);
  // An invoice's stream rides with the key only where the events are tables of this database; elsewhere an
  // edit's named customer still does, as a create's.
  if (hint?.kind === 'invoice' && rt.store.kind !== 'postgres') hint = hint.customerId === undefined ? null : { kind: 'customer', id: hint.customerId };
  const { rows } = await rt.database.pool.query(keyStatement(hash, hint));
  let principal: Principal;
  try {
    principal = principalOf(rows, hash, mode, hint);
  } catch (err) {
    memory?.forget(hash);
    throw err;
  }
  if (hint?.kind === 'customer') memory?.remember(hash, rows[0], hint);
  return principal;
}

/**
 * The principal the key's statement's rows describe (401 when there is none, or no key of this secret and mode):
 * one row, or one per event of a stream it fetched (the key's columns the same on each).
 */
export function principalOf(rows: readonly Record<string, any>[], hash: string, mode: KeyMode, hint: PrefetchHint): Principal {
  const row = rows[0];
  if (!row || !sameHash(row.secret_hash, hash) || row.mode !== mode) throw unauthorized();
  // An organization key whose organization is gone from the read model cannot act anywhere.
  if (row.kind === 'organization' && row.org_account_id !== row.account_id) throw unauthorized();

  const key: ApiKeyInfo = {
    id: row.id,
    kind: row.kind,
    mode: row.mode,
    accountId: row.account_id,
    organizationId: row.organization_id,
    scopes: row.scopes as Scope[],
  };
  return {
    key,
    secretHash: hash,
    window: windowOf(row.window_points, row.window_expire),
    plan: row.plan,
    subscription: effectiveSubscriptionStatus(row as Parameters<typeof effectiveSubscriptionStatus>[0]),
    requestsPerMinute: requestsPerMinute(row.plan, row.requests_per_minute),
    keyOrganization:
      row.kind === 'organization'
        ? { id: row.organization_id, accountId: row.account_id, archived: row.org_archived, apiEnabled: row.org_api_enabled }
        : null,
    prefetched: prefetchedOf(hint, rows),
  };
}
