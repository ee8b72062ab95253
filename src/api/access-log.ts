/**
 * Request id, access log (pino-http) and HTTP metrics for every request the
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
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { pinoHttp } from 'pino-http';
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

export function accessLog(logger: Logger): RequestHandler {
  const log = pinoHttp<IncomingMessage, ServerResponse, never>({
    logger,
    // Every line of the request carries request_id only; the access line adds our fields below, not pino-http's req/res objects.
    quietReqLogger: true,
    quietResLogger: true,
    customAttributeKeys: { reqId: 'request_id', responseTime: 'ms' },
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : uuidv7();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel: (req, res, err) => {
      if (PROBES.has(((req as Request).originalUrl ?? req.url ?? '').split('?')[0])) return 'debug';
      if (res.statusCode === 500 || (err && res.statusCode < 400)) return 'error';
      return res.statusCode >= 500 ? 'warn' : 'info';
    },
    // Our own fields instead of pino-http's req/res objects (no headers: they hold keys and cookies).
    customSuccessObject: (req, res, val) => line(req as Request, res as Response, val.ms),
    // A 5xx was already logged once with its cause (src/api/errors.ts); no second stack here.
    customErrorObject: (req, res, _err, val) => line(req as Request, res as Response, val.ms),
    customSuccessMessage: (req, res) => `${req.method} ${routeTemplate(req as Request, res as Response)} ${res.statusCode}`,
    customErrorMessage: (req, res) => `${req.method} ${routeTemplate(req as Request, res as Response)} ${res.statusCode}`,
  });
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    log(req, res);
    res.locals.requestId = req.id;
    res.locals.logger = req.log;
    res.on('finish', () => {
      const labels = { method: req.method, route: routeTemplate(req, res), status: String(res.statusCode) };
      httpRequests.inc(labels);
      httpDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    });
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
