/**
 * Idempotency-Key on POST (docs/api-decisions.md "Beyond the reference"), scoped to the API key.
 *
 * The first request inserts its (key id, Idempotency-Key) row "in progress"
 * under the primary key, so of concurrent duplicates exactly one wins the
 * insert and runs; the others poll the row until the winner stores its
 * response, then replay it. The fingerprint (method, URL, organization, raw
 * body) tells a retry from a reuse with another body (409). Rows live 24 h.
 * 5xx responses are not stored (the lease is ended), so the client can retry.
 * A process that dies mid-request leaves its row in progress until its lease
 * ends, after which a retry with the same body takes it over. The takeover
 * keeps the row's `seed`, from which the request derives the ids of what it
 * creates (RequestContext.newId): if the dead attempt had already created the
 * invoice, customer or organization, the retry finds it and answers with it
 * instead of creating a second one.
 */
import { createHash, randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { Request } from 'express';
import { sql, type Kysely } from 'kysely';
import { DomainError, validationError } from '../../shared/errors.ts';
import { rawBody } from '../body.ts';
import { bodyBytes, type Rendered } from './reply.ts';
import type { Database } from '../../db/schema.ts';

const LEASE_SECONDS = 120;
const WAIT_MS = 30_000;
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

export interface Claim {
  apiKeyId: string;
  key: string;
  /** This attempt's ownership token. */
  claim: string;
  /** Shared by every attempt of the request (null on rows older than migration 0012). */
  seed: string | null;
}

/** `waited`: the key was claimed only after waiting for another attempt of the request (the first try found it taken). */
export type Begin = { owner: Claim; waited: boolean } | { replay: Rendered };

/** The Idempotency-Key of a POST, or null when none was sent. */
export function idempotencyKeyOf(req: Request): string | null {
  if (req.method !== 'POST') return null;
  const value = req.header('idempotency-key');
  if (value === undefined) return null;
  if (!KEY_FORMAT.test(value)) {
    throw validationError([{ field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }]);
  }
  return value;
}

export function fingerprint(req: Request, organizationId: string | null): string {
  // The path in lower case: routes match their own segments case-sensitively, so only its ids can differ
  // in case, and an id names one resource however it is written (src/api/pipeline/validate.ts).
  const query = req.originalUrl.indexOf('?');
  const url = query < 0 ? req.originalUrl.toLowerCase() : `${req.originalUrl.slice(0, query).toLowerCase()}${req.originalUrl.slice(query)}`;
  return createHash('sha256')
    .update(`${req.method}\n${url}\n${organizationId ?? ''}\n`)
    .update(rawBody(req))
    .digest('hex');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function tryClaim(db: Kysely<Database>, apiKeyId: string, key: string, print: string): Promise<Claim | null> {
  const claim = randomUUID();
  // Insert, or take over a row that expired (24 h: a new request, a new seed) or whose
  // owner's lease ran out on the same request (the same work again: the same seed).
  const { rows } = await sql<{ seed: string | null }>`
    insert into idempotency_keys (api_key_id, idempotency_key, fingerprint, claim, seed, locked_until)
    values (${apiKeyId}, ${key}, ${print}, ${claim}, ${uuidv7()}, now() + make_interval(secs => ${LEASE_SECONDS}))
    on conflict (api_key_id, idempotency_key) do update
       set fingerprint = excluded.fingerprint, claim = excluded.claim, locked_until = excluded.locked_until,
           completed = false, response_status = null, response_body = null, response_headers = null, created_at = now(),
           seed = case when idempotency_keys.created_at < now() - interval '24 hours' then excluded.seed else idempotency_keys.seed end
     where idempotency_keys.created_at < now() - interval '24 hours'
        or (not idempotency_keys.completed and idempotency_keys.locked_until < now() and idempotency_keys.fingerprint = excluded.fingerprint)
    returning seed`.execute(db);
  return rows.length ? { apiKeyId, key, claim, seed: rows[0].seed } : null;
}

/** Claims the key (the caller then runs the request) or returns the response to replay. */
export async function begin(db: Kysely<Database>, apiKeyId: string, key: string, print: string): Promise<Begin> {
  const deadline = Date.now() + WAIT_MS;
  for (let pause = 20, waited = false; ; pause = Math.min(pause * 2, 250), waited = true) {
    const owner = await tryClaim(db, apiKeyId, key, print);
    if (owner) return { owner, waited };
    const row = await db
      .selectFrom('idempotency_keys')
      .select(['fingerprint', 'completed', 'response_status', 'response_body', 'response_bytes', 'response_headers'])
      .where('api_key_id', '=', apiKeyId)
      .where('idempotency_key', '=', key)
      .executeTakeFirst();
    if (row && row.fingerprint !== print) {
      throw new DomainError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request. Use a new key.');
    }
    if (row?.completed) {
      // The stored bytes (jsonb alone would reorder the keys); rows older than migration 0020 have only the jsonb.
      return { replay: { status: row.response_status!, headers: row.response_headers ?? {}, json: row.response_body, file: null, bytes: row.response_bytes ?? undefined } };
    }
    // Still in progress (or just released by a failed owner: the next claim takes it).
    if (Date.now() >= deadline) {
      throw new DomainError('IDEMPOTENCY_KEY_REUSED', 'A request with this Idempotency-Key is still in progress. Retry later.');
    }
    if (row) await sleep(pause);
  }
}

/** Stores the response for replays; 5xx and file responses release the key instead. */
export async function finish(db: Kysely<Database>, c: Claim, r: Rendered): Promise<void> {
  if (r.status >= 500 || r.file) return release(db, c);
  await sql`
    update idempotency_keys
       set completed = true, locked_until = null, response_status = ${r.status},
           response_body = ${bodyBytes(r)}::jsonb, response_bytes = ${bodyBytes(r)}, response_headers = ${JSON.stringify(r.headers)}::jsonb
     where api_key_id = ${c.apiKeyId} and idempotency_key = ${c.key} and claim = ${c.claim}`.execute(db);
}

/**
 * Gives the key back after a 5xx (or a file reply): its lease ends now, so
 * the next attempt of the same request takes it over at once, with the same
 * seed (what this attempt may already have created is found, not created
 * again); another body still gets 409.
 */
export async function release(db: Kysely<Database>, c: Claim): Promise<void> {
  await sql`
    update idempotency_keys set locked_until = now() - interval '1 millisecond'
     where api_key_id = ${c.apiKeyId} and idempotency_key = ${c.key} and claim = ${c.claim} and not completed`.execute(db);
}

/** Drops rows older than 24 h (called now and then; the index on created_at keeps it cheap). */
export async function purgeExpired(db: Kysely<Database>): Promise<void> {
  await sql`delete from idempotency_keys where created_at < now() - interval '24 hours'`.execute(db);
}
