/**
 * Turns RouteSpecs into express handlers that run the checks in the order of
 * docs/api-decisions.md "Keys, plans and quotas": authentication (401), key kind / organization (400,
 * 403, 404), plan, subscription and organization state (403), scope (403),
 * rate limit (429), validation (400/404/415), Idempotency-Key, If-Match, then
 * the handler and its reply. Each step lives in its own file here. A route
 * that allows it first runs on what the process remembers of its key
 * (remembered.ts), and the normal way whenever that did not write.
 */
import type { NextFunction, Request, Response, Router } from 'express';
import type { Runtime } from '../../runtime.ts';
import { DomainError } from '../../shared/errors.ts';
import type { RouteSpec } from '../route.ts';
import { authorize } from './access.ts';
import { createContext, dropPrefetched } from './context.ts';
import { derivedV7 } from '../../shared/derived-id.ts';
import { begin, finish, fingerprint, idempotencyKeyOf, purgeExpired, release } from './idempotency.ts';
import { authenticateAndCount } from './keyed.ts';
import { prefetchHint } from './prefetch.ts';
import { KeyMemory, runOnRememberedKey } from './remembered.ts';
import { enforceRateLimit } from './ratelimit.ts';
import { renderError, renderReply, send, type Rendered } from './reply.ts';
import type { UnauthenticatedLimiter } from './unauthenticated.ts';
import { compileValidator, refusal } from './validate.ts';
import { linkHeader, withLocation } from './links.ts';

const PURGE_EVERY = 1000; // idempotent requests between two purges of expired keys

/** `unauthenticated`: the API's limiter of requests without a valid key, shared with its answers where no route ran. */
export function mountRoutes(router: Router, rt: Runtime, specs: readonly RouteSpec[], unauthenticated: UnauthenticatedLimiter): void {
  let idempotentRequests = 0;
  const memory = new KeyMemory();
  for (const spec of specs) {
    const validate = compileValidator(spec); // at start-up: a bad schema fails early
    router[spec.method](spec.path, async (req: Request, res: Response, next: NextFunction) => {
      res.locals.route = `${req.baseUrl}${spec.path}`; // the route template of the access log and metrics (src/api/access-log.ts)
      try {
        const remembered = await runOnRememberedKey(rt, memory, unauthenticated, spec, validate, req, res);
        if (remembered.kind === 'written') return send(res, remembered.rendered);
        const { principal, rate } = await authenticateAndCount(rt, unauthenticated, req, res, prefetchHint(spec.prefetch, req), memory);
        const organizationId = await authorize(rt, req, spec, principal);
        enforceRateLimit(res, rate);
        const checked = validate(req);
        if (checked.errors.length) throw await refusal(spec, checked, { rt, organizationId, accountId: principal.key.accountId, params: req.params as Record<string, string> });
        const input = checked.input;
        // The service failed on the remembered key with nothing written: the checks passed again, that failure is the answer.
        if (remembered.kind === 'failed') throw remembered.error;
        const idemKey = idempotencyKeyOf(req);
        const ctx = createContext(rt, req, res, principal.key, organizationId, principal.prefetched);
        if (spec.changesCustomer) memory.forgetCustomer(String(req.params.id));
        const run = async (): Promise<Rendered> => {
          try {
            return withLocation(spec, req.baseUrl, renderReply(await spec.handler(ctx, input)));
          } catch (err) {
            if (err instanceof DomainError && err.status < 500) return renderError(err);
            throw err;
          }
        };
        if (idemKey === null) {
          const rendered = await run();
          const link = linkHeader(req, rendered);
          if (link) res.setHeader('Link', link);
          return send(res, rendered);
        }

        const db = rt.database.db;
        if (++idempotentRequests % PURGE_EVERY === 0) purgeExpired(db).catch(() => {});
        const print = fingerprint(req, organizationId);
        const started = await begin(db, principal.key.id, idemKey, print);
        if ('replay' in started) {
          res.setHeader('Idempotent-Replayed', 'true');
          return send(res, started.replay);
        }
        // Per request, not only per key: a row taken over with another body (by code
        // older than migration 0012) must not lead to the first body's resources.
        ctx.idempotencySeed = started.owner.seed && derivedV7(started.owner.seed, print);
        // Facts fetched with the key are as old as the request; after waiting (up to 30 s) for another attempt,
        // the handler reads them afresh, as it would without a prefetch (prefetch.ts).
        if (started.waited) dropPrefetched(ctx);
        let rendered: Rendered;
        try {
          rendered = await run();
        } catch (err) {
          await release(db, started.owner).catch(() => {});
          throw err;
        }
        // The work is done: a failure to record it must not turn the answer into an error.
        await finish(db, started.owner, rendered).catch((err) =>
          res.locals.logger?.error({ err }, 'could not store the Idempotency-Key response'),
        );
        send(res, rendered);
      } catch (err) {
        next(err);
      }
    });
  }
}
