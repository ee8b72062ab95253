/**
 * Writes on a remembered key (docs/api-pipeline.md "Writes on a remembered
 * key"): a route that allows it (RouteSpec.rememberedKey) runs its checks
 * and its decision on what the process remembers of the key (its account,
 * its organization) and of the customer the body names, from the last time
 * the key's statement read them, and its one append commits under a
 * condition (AppendCondition) that reads them again in the append's own
 * transaction: the same rows, digest for digest, and the request counted in
 * the key's rate-limit window with room left. A lone create then makes one
 * round trip instead of two (docs/performance.md "The key checked in the
 * append's own transaction").
 *
 * Nothing is answered from memory that the database did not confirm at the
 * write: a revoked key, a changed plan, scope, organization state or
 * customer, or a full window refuses the append (nothing is written), and
 * the request runs again the normal way (runOnRememberedKey says `normal`),
 * which answers as if nothing had been remembered (401, 403, 429, the
 * customer as it is now). So does every other answer than a committed write
 * (a 400, a 404, a decision's refusal): the normal way gives it, in the
 * order of checks. A failure of the service with nothing written (a
 * projector's bug, the database gone) is not run again, which would repeat
 * its alert and its effects: the normal way checks the key first (a key that
 * no longer passes gets its own answer), then fails with it. An outcome that
 * is unknown (the connection lost with the append) is not run again either:
 * it fails as it would have.
 */
import type { Request, Response } from 'express';
import type { Runtime } from '../../runtime.ts';
import { appendCondition, ConditionFailedError, type AppendCondition } from '../../eventstore/types.ts';
import { DomainError } from '../../shared/errors.ts';
import { sqlLiteral } from '../../eventstore/sql-literal.ts';
import type { RequestContext, RouteSpec } from '../route.ts';
import { authorize } from './access.ts';
import { callerCte, keyOf, principalOf, rowDigest, type Principal } from './authenticate.ts';
import { createContext } from './context.ts';
import { prefetchCte, prefetchHint } from './prefetch.ts';
import { COUNT_REQUEST, rateLimitOf, windowOf, WINDOW_MS, type RateLimitResult, type RateWindow } from './ratelimit.ts';
import { authenticated } from './keyed.ts';
import { renderReply, type Rendered } from './reply.ts';
import type { UnauthenticatedLimiter } from './unauthenticated.ts';
import type { RouteValidator } from './validate.ts';
import { withLocation } from './links.ts';
import { keepNewest } from '../../shared/newest-first.ts';

/** Keys and customers remembered at most (the oldest go first). */
const MAX_REMEMBERED = 10_000;

interface RememberedKey {
  /** The key's statement's row, without the customer's columns. */
  row: Record<string, any>;
  /** The request window the key was last seen in. */
  window: RateWindow;
}

/**
 * What this process's key statements said lately: each key's row (by its
 * secret's hash, as stored) and each customer's (by id). Rows only, with the
 * digest PostgreSQL computed of them: never a secret.
 */
export class KeyMemory {
  private readonly keys = new Map<string, RememberedKey>();
  private readonly customers = new Map<string, Record<string, any>>();

  /** A key that authenticated, and the customer its statement fetched for `hint` (forgotten when there is none). */
  remember(hash: string, row: Record<string, any>, hint: { id: string }): void {
    const key: Record<string, any> = {};
    const customer: Record<string, any> = {};
    for (const [name, value] of Object.entries(row)) (name.startsWith('c_') ? customer : key)[name] = value;
    keepNewest(this.keys, hash, { row: key, window: windowOf(row.window_points, row.window_expire) }, MAX_REMEMBERED);
    if (customer.c_id && customer.c_digest) keepNewest(this.customers, hint.id, customer, MAX_REMEMBERED);
    else this.customers.delete(hint.id);
  }

  /** A key that no longer authenticates, or whose remembered rows a write found changed. */
  forget(hash: string, customerId?: string): void {
    this.keys.delete(hash);
    if (customerId !== undefined) this.customers.delete(customerId);
  }

  /**
   * A customer this process is changing (RouteSpec.changesCustomer): the next create naming it reads it
   * afresh, rather than sending a condition sure to be refused, which in a group of creations would send
   * every other creation of the group again one by one.
   */
  forgetCustomer(customerId: string): void {
    this.customers.delete(customerId.toLowerCase());
  }

  /** The key's and the customer's rows as one row of the key's statement, and the key's window, when both rows are remembered. */
  recall(hash: string, customerId: string): { row: Record<string, any>; window: RateWindow } | null {
    const key = this.keys.get(hash);
    const customer = this.customers.get(customerId);
    return key && customer ? { row: { ...key.row, ...customer }, window: key.window } : null;
  }

  /** The window a committed write was counted in. */
  counted(hash: string, window: RateWindow): void {
    const key = this.keys.get(hash);
    if (key) key.window = window;
  }

  /** The remembered window with one more request in it (a new one once it closed). */
  nextInWindow(hash: string, now = Date.now()): RateWindow {
    const window = this.keys.get(hash)?.window;
    if (!window || window.closesAt <= now) return { used: 1, closesAt: now + WINDOW_MS };
    return { used: window.used + 1, closesAt: window.closesAt };
  }
}

/**
 * The condition's statement: the key's statement again ($1 the key's id, $2 now in ms, $3 the customer's
 * id), in the append's transaction, refusing it (es_require, migration 0109) unless the key's row and the
 * customer's row have the digests remembered ($4, $5) and the request, counted now, is within the key's
 * limit ($6, 0 for none). Its row is the window the request was counted in. By the key's id, not its
 * secret's hash: a refused statement's text goes to PostgreSQL's log, and the hash is the key's secret as
 * stored (the key's digest leaves it out: authenticate.ts, callerCte).
 */
const CONDITION = `
  with ${callerCte('k.id = $1::uuid', true)}, hit as (${COUNT_REQUEST}), ${prefetchCte('$3::uuid')}
  select es_require(
           (select caller_digest from caller) = $4::text
           and (select ${rowDigest('fetched')} from fetched) = $5::text
           and (select $6::bigint = 0 or hit.points <= $6::bigint from hit),
           'the key, its account or organization, or the customer changed since they were read, or the rate limit is reached') as ok,
         (select points from hit) as window_points,
         (select expire from hit) as window_expire`;

/**
 * What became of a request on its remembered key:
 * - `written`: a write that committed under its condition, rendered;
 * - `failed`: a failure of the service with nothing written, to answer once the normal way's checks pass
 *   (instead of its handler: running it again would repeat the failure's alert and effects);
 * - `normal`: nothing was written; run the request the normal way.
 */
export type RememberedOutcome = { kind: 'written'; rendered: Rendered } | { kind: 'failed'; error: unknown } | { kind: 'normal' };

const NORMAL: RememberedOutcome = { kind: 'normal' };

/** Runs a request on its remembered key (the module's comment). */
export async function runOnRememberedKey(
  rt: Runtime,
  memory: KeyMemory,
  unauthenticated: UnauthenticatedLimiter,
  spec: RouteSpec,
  validate: RouteValidator,
  req: Request,
  res: Response,
): Promise<RememberedOutcome> {
  if (!spec.rememberedKey || !rt.store.withCondition || req.header('idempotency-key') !== undefined) return NORMAL;
  // The condition locks the key's count row until its write commits. Creations in groups (INLINE_PROJECTIONS=auto,
  // the default) share that lock, one group at a time; with a transaction per write (true, false) a key's
  // concurrent creates would wait for each other's commits (measured: docs/performance.md "The key checked in the
  // append's own transaction").
  if (rt.config.inlineProjections !== 'auto') return NORMAL;
  const hint = prefetchHint(spec.prefetch, req);
  if (hint?.kind !== 'customer') return NORMAL;
  let principal: Principal;
  let condition: AppendCondition;
  let ctx: RequestContext;
  let input: unknown;
  try {
    unauthenticated.check(req, res);
    const key = keyOf(rt, req);
    const recalled = memory.recall(key.hash, hint.id);
    if (!recalled) return NORMAL;
    principal = principalOf([recalled.row], key.hash, key.mode, hint);
    // An account key's organization is read by authorize() (a round trip of its own): not worth remembering.
    if (principal.key.kind !== 'organization') return NORMAL;
    // A window full as remembered is left to the normal way, which answers its 429 (the condition would refuse).
    const limit = principal.requestsPerMinute;
    if (limit > 0 && recalled.window.closesAt > Date.now() && recalled.window.used >= limit) return NORMAL;
    const organizationId = await authorize(rt, req, spec, principal);
    const checked = validate(req);
    if (checked.errors.length) return NORMAL;
    input = checked.input;
    const args = [principal.key.id, String(Date.now()), hint.id, recalled.row.caller_digest, recalled.row.c_digest].map((v) => sqlLiteral(String(v)));
    // In the order of the keys' ids: the order in which a message's conditions lock their keys' count rows.
    condition = appendCondition(CONDITION, [...args, String(principal.requestsPerMinute)], principal.key.id);
    ctx = createContext(rt, req, res, principal.key, organizationId, principal.prefetched);
    ctx.store = rt.store.withCondition(condition);
  } catch {
    return NORMAL; // the normal way gives every answer but a write's
  }
  const nothingWritten = () => condition.state === 'unsent' || condition.state === 'refused';
  let reply;
  try {
    reply = await spec.handler(ctx, input as never);
  } catch (err) {
    if (nothingWritten()) {
      if (err instanceof ConditionFailedError || (err instanceof DomainError && err.status < 500)) {
        memory.forget(principal.secretHash, hint.id);
        return NORMAL;
      }
      return { kind: 'failed', error: err };
    }
    // The append may have committed (its outcome is unknown), or did and what followed failed: the request
    // fails, as on the normal way, counted in its window (the count went with the append).
    authenticated(res, unauthenticated, principal, counted(memory, principal, condition));
    throw err;
  }
  // A handler that wrote nothing under the condition answered from memory alone: the normal way answers instead.
  if (nothingWritten()) return NORMAL;
  if (condition.state !== 'committed') throw new Error(`a write on a remembered key answered with its condition ${condition.state}`);
  authenticated(res, unauthenticated, principal, counted(memory, principal, condition));
  return { kind: 'written', rendered: withLocation(spec, req.baseUrl, renderReply(reply)) };
}

/**
 * The window a write under `condition` was counted in: the condition's own count, or, when it was not read
 * back (an append an earlier attempt stored, whose answer was lost: append-groups.ts; an outcome unknown),
 * the remembered window with one more request.
 */
function counted(memory: KeyMemory, principal: Principal, condition: AppendCondition): RateLimitResult {
  const seen = condition.state === 'committed' ? condition.seen : null;
  const window = seen ? windowOf(seen.window_points as number, seen.window_expire as string) : memory.nextInWindow(principal.secretHash);
  memory.counted(principal.secretHash, window);
  return rateLimitOf(window, principal.requestsPerMinute);
}
