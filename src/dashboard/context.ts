/**
 * What every dashboard handler shares: the signed-in user and their role,
 * the selected organization (from the URL, always checked against the
 * user's account: anything else is a 404 page), flash messages (set before a
 * redirect, shown once), form errors, and rendering with the layout.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Account } from '../accounts/accounts.ts';
import { isUuid } from '../shared/ids.ts';
import type { Runtime } from '../runtime.ts';
import { DomainError } from '../shared/errors.ts';
import type { Lang } from './i18n.ts';
import type { DashboardUser, OrganizationChoice, Role } from './users.ts';
import { renderPage } from './views.ts';

declare module 'express-session' {
  interface SessionData {
    userId?: string;
    signedInAt?: number;
    lang?: Lang;
    flash?: { kind: 'ok' | 'error'; key: string; params?: Record<string, unknown> };
    /** The last organization opened, where /dashboard leads back to. */
    orgId?: string;
  }
}

export interface Locals {
  user: DashboardUser;
  account: Account;
  /** The account's organizations, read with the user (users.ts signedInUser). */
  organizations: OrganizationChoice[];
  /** The organization the URL names, one of them. */
  org?: OrganizationChoice;
}

const RANK: Record<Role, number> = { viewer: 0, admin: 1, owner: 2 };

export function hasRole(user: DashboardUser, role: Role): boolean {
  return RANK[user.role] >= RANK[role];
}

export function langOf(req: Request): Lang {
  return req.session?.lang ?? 'fr';
}

export function userOf(res: Response): DashboardUser {
  return res.locals.user as DashboardUser;
}

export function orgOf(res: Response): OrganizationChoice {
  return res.locals.org as OrganizationChoice;
}

export function flash(req: Request, kind: 'ok' | 'error', key: string, params?: Record<string, unknown>): void {
  req.session.flash = { kind, key, params };
}

/** Field errors from a DomainError: its details.fields, else one error naming the form. */
export function formErrors(err: unknown): { field: string; message: string }[] | null {
  if (!(err instanceof DomainError) || err.status >= 500 || err.code === 'NOT_FOUND') return null;
  const fields = (err.details as { fields?: { field: string; message: string }[] } | undefined)?.fields;
  return fields?.length ? fields : [{ field: '', message: err.message }];
}

/** Renders `view` in the layout, with what every page needs. */
export async function render(rt: Runtime, req: Request, res: Response, view: string, data: Record<string, unknown> = {}, status = 200): Promise<void> {
  const user = res.locals.user as DashboardUser | undefined;
  const org = res.locals.org as OrganizationChoice | undefined;
  const flashed = req.session?.flash;
  if (flashed) delete req.session.flash;
  // The switcher: the organizations read with the user at the start of this request.
  const choices = user ? ((res.locals.organizations as OrganizationChoice[] | undefined) ?? []) : [];
  const orgs = choices.map((o) => ({ id: o.id, legal_name: o.legal_name, archived: o.archived, selected: o.id === org?.id }));
  const html = renderPage(view, {
    lang: langOf(req),
    csrf: req.csrfToken?.(),
    user: user ? { ...user, self: user.id } : null,
    account: res.locals.account,
    org,
    orgBase: org ? `/dashboard/o/${org.id}` : null,
    orgs,
    section: view.split('-')[0],
    can: user ? { write: hasRole(user, 'admin'), own: hasRole(user, 'owner') } : {},
    flash: flashed,
    path: req.originalUrl,
    ...data,
  });
  res.status(status).type('html').send(html);
}

export function notFoundPage(rt: Runtime): RequestHandler {
  return (req, res) => render(rt, req, res, 'error', { title: 'error.not_found.title', text: 'error.not_found.text' }, 404);
}

/** Only users of at least `role`; anyone else gets the 403 page (a forged form included). */
export function requireRole(rt: Runtime, role: Role): RequestHandler {
  return (req, res, next) => {
    if (hasRole(userOf(res), role)) return next();
    return render(rt, req, res, 'error', { title: 'error.forbidden.title', text: 'error.forbidden.text' }, 403);
  };
}

/**
 * Puts `:org` into res.locals.org when it is one of the account's
 * organizations (the list read with the user: no query of its own), else
 * the 404 page.
 */
export function withOrg(rt: Runtime): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const id = String(req.params.org ?? '').toLowerCase();
    const org = isUuid(id) ? (res.locals.organizations as OrganizationChoice[]).find((o) => o.id === id) : undefined;
    if (!org) return notFoundPage(rt)(req, res, next);
    res.locals.org = org;
    req.session.orgId = org.id;
    next();
  };
}

/** Whether row `id` of `table` belongs to organization `orgId` (a malformed id does not). */
export async function ownedBy(rt: Runtime, table: 'api_keys' | 'webhook_endpoints' | 'webhook_deliveries', id: string, orgId: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const row = await rt.database.db.selectFrom(table).select('id').where('id', '=', id.toLowerCase()).where('organization_id', '=', orgId).executeTakeFirst();
  return Boolean(row);
}

/** Records a configuration change made in the dashboard (keys, webhooks, users) with its user. */
export async function audit(rt: Runtime, res: Response, action: string, targetId: string | null): Promise<void> {
  const user = userOf(res);
  const org = res.locals.org as OrganizationChoice | undefined;
  await rt.database.db
    .insertInto('dashboard_audit')
    .values({ account_id: user.account_id, organization_id: org?.id ?? null, user_id: user.id, action, target_id: targetId })
    .execute();
}

/** The event metadata of a command issued from the dashboard: the user is the actor. */
export function metadataOf(res: Response, organizationId: string | null) {
  return {
    organization_id: organizationId,
    actor: `user:${userOf(res).id}`,
    request_id: (res.locals.requestId as string | undefined) ?? null,
    correlation_id: null,
    causation_id: null,
    occurred_at: new Date().toISOString(),
  };
}

/** A form field as a trimmed string ('' when absent or repeated oddly). */
export function field(body: unknown, name: string): string {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v.trim() : '';
}

/** A form field that may repeat (checkboxes), as a list of strings. */
export function fieldList(body: unknown, name: string): string[] {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return typeof v === 'string' ? [v] : [];
}

/**
 * 303 to `url` once the session (sign-in, flash message) is stored:
 * express-session may flush a redirect's headers before its own save ends,
 * and the browser's next request would then find the old session.
 */
export async function seeOther(req: Request, res: Response, url: string): Promise<void> {
  if (req.session) await new Promise<void>((resolve, reject) => req.session.save((err) => (err ? reject(err) : resolve())));
  res.redirect(303, url);
}
