/**
 * The dashboard at /dashboard (docs/dashboard.md): server-rendered pages for
 * an account's users. Every change goes through the same code as the admin
 * CLI (src/accounts, src/workers/webhooks, the organization commands,
 * src/dashboard/users.ts); this file only wires security, sign-in and the
 * page modules.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import type { Runtime } from '../runtime.ts';
import { field, langOf, notFoundPage, render, seeOther } from './context.ts';
import { isLang } from './i18n.ts';
import { deliveryPages } from './pages/deliveries.ts';
import { invoicePages } from './pages/invoices.ts';
import { keyPages } from './pages/keys.ts';
import { organizationPages } from './pages/organizations.ts';
import { userPages } from './pages/users.ts';
import { webhookPages } from './pages/webhooks.ts';
import { ABSOLUTE_MS, COOKIE_NAME, csrf, securityHeaders, sessions, signInLimiters, type SignInLimiters } from './security.ts';
import { authenticate, signedInUser } from './users.ts';

const ASSETS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'assets');

/** Where a signed-in user lands: the last organization opened, else the first one, else Organizations. */
async function home(rt: Runtime, req: Request, accountId: string): Promise<string> {
  let q = rt.database.db.selectFrom('organizations').select('id').where('account_id', '=', accountId);
  if (req.session.orgId) q = q.where('id', '=', req.session.orgId);
  const org = (await q.orderBy('created_at').limit(1).executeTakeFirst()) ?? null;
  return org ? `/dashboard/o/${org.id}/keys` : '/dashboard/organizations';
}

/** Only `/dashboard/...` paths, so the `next` of the sign-in form can never send anyone elsewhere. */
function safeNext(value: string): string | null {
  return /^\/dashboard\/[A-Za-z0-9/_\-?=&.%]*$/.test(value) && !value.includes('//') ? value : null;
}

function clientAddress(req: Request): string {
  return req.socket.remoteAddress ?? 'unknown';
}

async function signIn(rt: Runtime, limiters: SignInLimiters, req: Request, res: Response): Promise<void> {
  const email = field(req.body, 'email').toLowerCase();
  const password = typeof req.body?.password === 'string' ? (req.body.password as string) : '';
  const next = safeNext(field(req.body, 'next'));
  const [byEmail, byAddress] = await Promise.all([limiters.email.get(email), limiters.address.get(clientAddress(req))]);
  const blocked = [byEmail && byEmail.consumedPoints >= limiters.email.points ? byEmail : null, byAddress && byAddress.consumedPoints >= limiters.address.points ? byAddress : null]
    .filter((r) => r !== null)
    .map((r) => r.msBeforeNext);
  if (blocked.length > 0) {
    const minutes = Math.max(1, Math.ceil(Math.max(...blocked) / 60_000));
    res.setHeader('Retry-After', String(Math.ceil(Math.max(...blocked) / 1000)));
    return render(rt, req, res, 'signin', { email, next, error: { key: 'signin.limited', params: { minutes } } }, 429);
  }
  const user = email && password ? await authenticate(rt.database.db, email, password) : null;
  if (!user) {
    await Promise.all([limiters.email.penalty(email || '(empty)'), limiters.address.penalty(clientAddress(req))]);
    return render(rt, req, res, 'signin', { email, next, error: { key: 'signin.failed' } }, 401);
  }
  await limiters.email.delete(email);
  const lang = langOf(req);
  // A new session id at sign-in: a session id planted before sign-in is worthless after it.
  await new Promise<void>((resolve, reject) => req.session.regenerate((err) => (err ? reject(err) : resolve())));
  req.session.userId = user.id;
  req.session.signedInAt = Date.now();
  req.session.lang = lang;
  req.csrfToken?.(true);
  return seeOther(req, res, next ?? (await home(rt, req, user.account_id)));
}

export function dashboardRouter(rt: Runtime): Router {
  const router = Router();
  const limiters = signInLimiters(rt);
  router.use(securityHeaders);
  router.use('/assets', express.static(ASSETS, { index: false, maxAge: '1h', fallthrough: false }));
  router.use((_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store'); // pages may show a secret once: never cached
    next();
  });
  router.use(express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 300 }));
  router.use(sessions(rt));
  router.use(csrf.csrfSynchronisedProtection);

  // Who is signed in: re-read on every request, so a disabled user is out at once
  // (one query: the user, the account and its organizations, users.ts signedInUser).
  router.use(async (req, res, next) => {
    const s = req.session;
    if (!s.userId) return next();
    const found = await signedInUser(rt.database.db, s.userId);
    if (!found || found.user.disabled_at || Date.now() - (s.signedInAt ?? 0) > ABSOLUTE_MS) {
      delete s.userId;
      delete s.signedInAt;
      return next();
    }
    res.locals.user = found.user;
    res.locals.account = found.account;
    res.locals.organizations = found.organizations;
    next();
  });

  router.get('/', async (req, res) => {
    if (res.locals.user) return res.redirect(303, await home(rt, req, res.locals.user.account_id));
    const next = typeof req.query.next === 'string' ? safeNext(req.query.next) : null;
    return render(rt, req, res, 'signin', { next, expired: next !== null ? { key: 'signin.expired' } : null });
  });
  router.post('/sign-in', (req, res) => signIn(rt, limiters, req, res));
  router.post('/lang', (req, res) => {
    const lang = field(req.body, 'lang');
    if (isLang(lang)) req.session.lang = lang;
    return seeOther(req, res, safeNext(field(req.body, 'back')) ?? '/dashboard/');
  });

  // Everything below needs a signed-in user.
  router.use((req: Request, res: Response, next: NextFunction) => {
    if (res.locals.user) return next();
    const back = req.method === 'GET' ? safeNext(req.originalUrl) : null;
    res.redirect(303, back ? `/dashboard/?next=${encodeURIComponent(back)}` : '/dashboard/');
  });
  router.post('/sign-out', (req, res, next) => {
    req.session.destroy((err) => {
      if (err) return next(err);
      res.clearCookie(COOKIE_NAME, { path: '/dashboard' });
      res.redirect(303, '/dashboard/');
    });
  });

  organizationPages(router, rt);
  keyPages(router, rt);
  webhookPages(router, rt);
  deliveryPages(router, rt);
  invoicePages(router, rt);
  userPages(router, rt);

  router.use(notFoundPage(rt));
  router.use((err: any, req: Request, res: Response, _next: NextFunction) => {
    if (err?.code === 'EBADCSRFTOKEN') {
      return render(rt, req, res, 'error', { title: 'error.csrf.title', text: 'error.csrf.text' }, 403);
    }
    // A path whose percent-encoding does not decode (express's router refuses it) names no page either.
    if (err?.status === 404 || err?.statusCode === 404 || (err instanceof URIError && (err as URIError & { status?: number }).status === 400)) return notFoundPage(rt)(req, res, _next);
    if (typeof err?.status === 'number' && err.status >= 400 && err.status < 500) {
      return render(rt, req, res, 'error', { title: 'error.forbidden.title', text: 'error.csrf.text' }, err.status);
    }
    (res.locals.logger ?? rt.logger).error({ err }, 'dashboard request failed');
    if (res.headersSent) return;
    const requestId = res.locals.requestId;
    try {
      res.status(500).type('html');
      return void render(rt, req, res, 'error', { title: 'error.internal.title', text: 'error.internal.text', params: { requestId } }, 500).catch(() =>
        res.end(`Internal error. Reference: ${requestId}`),
      );
    } catch {
      res.end(`Internal error. Reference: ${requestId}`);
    }
  });
  return router;
}
