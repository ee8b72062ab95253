/**
 * Request id, access log and HTTP metrics for every request the
 * server answers (docs/operations.md "Logs" and "Metrics").
 *
 * - `X-Request-Id`: the client's if it is sane (1..128 of `[\w.-]`), else a
 *   new UUID v7; sent back, put in every log line of the request
 *   (`res.locals.logger`) and in the events it appends.
 * - One line per answer: method, route template (`/api/v1/invoices/:id`, or
 *   `unmatched` for a path no route knows), full path with query, status,
 *   duration, client address, request id and, once authenticated, the API
 *   key's id (never its secret). Level: `error` for a 500, `warn` for another
 *   5xx, `info` otherwise; health probes and scrapes (`/healthz`, `/readyz`,
 *   `/metrics`) at `debug`, so a load balancer polling every second does not
 *   fill the log.
 * - The same route template and status label the request counter and latency
 *   histogram (src/shared/metrics.ts).
 * - `requests.inProgress` counts the requests being served (INLINE_PROJECTIONS=auto
 *   groups the creations made while others are in progress: src/eventstore/append-groups.ts).
 */
import type { Request, RequestHandler, Response } from 'express';
import { v7 as uuidv7 } from 'uuid';
import type { Logger } from '../shared/logger.ts';
import { httpDuration, httpRequests } from '../shared/metrics.ts';

const PROBES = new Set(['/healthz', '/readyz', '/metrics']);
const SANE_REQUEST_ID = /^[\w.-]{1,128}$/;

/**
 * The route template that matched: the API pipeline records it
 * (`res.locals.route`, set before anything can fail); other routers' matches
 * are read from express; a path no route matched is `unmatched` (one label
 * value, however many paths clients try).
 */
export function routeTemplate(req: Request, res: Response): string {
  if (typeof res.locals.route === 'string') return res.locals.route;
  const path = req.route?.path;
  return typeof path === 'string' ? `${req.baseUrl}${path}` : 'unmatched';
}

/**
 * Written by hand rather than with pino-http, which made two child loggers
 * per request (with the redaction and serializer set-up each implies) for a
 * line we build ourselves anyway: about a tenth of the server's CPU per
 * request (docs/performance.md "API pipeline"). The request's own logger
 * (`res.locals.logger`, used on error paths only) is made on first use.
 */
export function accessLog(logger: Logger, requests: { inProgress: number }): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    requests.inProgress++;
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : uuidv7();
    res.setHeader('X-Request-Id', id);
    res.locals.requestId = id;
    let child: Logger | undefined;
    Object.defineProperty(res.locals, 'logger', {
      configurable: true,
      enumerable: true,
      get: () => (child ??= logger.child({ request_id: id })),
      set: (replacement: Logger) => (child = replacement),
    });

    let done = false;
    // 'finish' when the answer is sent, 'close' alone when the client left first, 'error' when the socket failed.
    const complete = (err?: unknown) => {
      if (done) return;
      done = true;
      requests.inProgress--;
      res.removeListener('finish', complete);
      res.removeListener('close', complete);
      res.removeListener('error', complete);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = routeTemplate(req, res);
      const status = res.statusCode;
      const aborted = !res.writableFinished;
      if (!aborted) {
        const labels = { method: req.method, route, status: String(status) };
        httpRequests.inc(labels);
        httpDuration.observe(labels, seconds);
      }
      const level = PROBES.has((req.originalUrl ?? req.url ?? '').split('?')[0]) ? 'debug'
        : status === 500 || (err && status < 400) ? 'error'
          : status >= 500 ? 'warn' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      // A 5xx was already logged once with its cause (src/api/errors.ts); no second stack here.
      const fields = { request_id: id, ...line(req, res, Math.round(seconds * 1e6) / 1e3) };
      // Left before any answer began: no status was sent, so none is logged.
      if (aborted) Object.assign(fields, { aborted: true, ...(res.headersSent ? {} : { status: null }) });
      logger[level](fields, `${req.method} ${route} ${fields.status ?? 'aborted'}`);
    };
    res.on('finish', complete);
    res.on('close', complete);
    res.on('error', complete);
    next();
  };
}

function line(req: Request, res: Response, ms: number) {
  return {
    method: req.method,
    route: routeTemplate(req, res),
    url: req.originalUrl,
    status: res.statusCode,
    ms,
    remote_address: req.ip ?? req.socket.remoteAddress,
    key_id: res.locals.keyId,
  };
}
