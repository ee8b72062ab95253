/**
 * Two Host headers make a request ambiguous: a proxy may route by one and
 * the application read the other (request smuggling, cache poisoning). Node
 * keeps the first and drops the rest silently, so they are counted in the
 * raw headers and the request is refused with 400 before anything else runs.
 */
import type { NextFunction, Request, Response } from 'express';
import { validationError } from '../../shared/errors.ts';
import { sendError } from '../errors.ts';

export function strictHost(req: Request, res: Response, next: NextFunction): void {
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === 'host') hosts++;
  if (hosts > 1) {
    res.setHeader('Connection', 'close');
    return sendError(res, validationError([{ field: 'Host', message: 'must be sent exactly once' }], 'The request has more than one Host header.'));
  }
  next();
}
