/**
 * API keys of the selected organization: list, create (a bundle or
 * individual scopes; the secret shown once, on the answer to the POST, never
 * in a URL or a later page), revoke with a confirmation step. Creation and
 * revocation are src/accounts/keys.ts, the admin CLI's code: same plan
 * limit (QUOTA_EXCEEDED), same scope rules.
 *
 * "Last used" comes from the API's per-key rate-limit window (a window opens
 * with a key's first request in a minute), so it is exact to the minute and
 * costs the API nothing extra.
 */
import type { Request, Response, Router } from 'express';
import { sql } from 'kysely';
import { createApiKey, revokeKey, type ApiKeyRecord } from '../../accounts/keys.ts';
import { ALL_SCOPES, ACCOUNT_SCOPES, BUNDLES, bundleScopes, isBundle, parseScopes } from '../../accounts/scopes.ts';
import { PLAN_LIMITS, type Plan } from '../../accounts/plans.ts';
import type { Runtime } from '../../runtime.ts';
import { audit, field, fieldList, formErrors, flash, notFoundPage, orgOf, ownedBy, render, requireRole, withOrg, seeOther } from '../context.ts';

const PER_PAGE = 50;
const ORG_SCOPES = ALL_SCOPES.filter((s) => !ACCOUNT_SCOPES.includes(s));

async function lastUsed(rt: Runtime, keys: ApiKeyRecord[]): Promise<Map<string, Date>> {
  if (keys.length === 0) return new Map();
  const rows = await rt.database.db
    .selectFrom('rate_limits')
    .select(['key', 'expire'])
    .where('key', 'in', keys.map((k) => `rl:${k.id}`))
    .execute();
  return new Map(rows.map((r) => [String(r.key).slice(3), new Date(Number(r.expire) - 60_000)]));
}

/** The bundle whose scopes are exactly these, if any (shown instead of 17 chips). */
function bundleOf(scopes: readonly string[]): string | null {
  const key = [...scopes].sort().join(' ');
  return BUNDLES.find((b) => [...bundleScopes(b)].sort().join(' ') === key) ?? null;
}

async function page(rt: Runtime, req: Request, res: Response, extra: Record<string, unknown> = {}, status = 200) {
  const org = orgOf(res);
  const db = rt.database.db;
  // One page in SQL (active first, newest first), not every key of the organization.
  const counts = await db
    .selectFrom('api_keys')
    .select((eb) => [eb.fn.countAll<string>().as('all'), eb.fn.count<string>('id').filterWhere('revoked_at', 'is', null).as('active')])
    .where('organization_id', '=', org.id)
    .executeTakeFirstOrThrow();
  const pages = Math.max(1, Math.ceil(Number(counts.all) / PER_PAGE));
  const pageNo = Math.min(pages, Math.max(1, Number.parseInt(String(req.query.page ?? '1'), 10) || 1));
  const shown = (await db
    .selectFrom('api_keys')
    .select(['id', 'account_id', 'organization_id', 'kind', 'mode', 'prefix', 'last4', 'scopes', 'name', 'created_at', 'revoked_at'])
    .where('organization_id', '=', org.id)
    .orderBy(sql`revoked_at is null`, 'desc')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(PER_PAGE)
    .offset((pageNo - 1) * PER_PAGE)
    .execute()) as ApiKeyRecord[];
  const used = await lastUsed(rt, shown);
  const plan = res.locals.account.plan as Plan;
  const limits = PLAN_LIMITS[plan];
  const active = Number(counts.active);
  const values = (extra.values as Record<string, unknown> | undefined) ?? { bundle: 'invoicing', mode: rt.config.serviceMode, scopes: [] };
  return render(rt, req, res, 'keys', {
    keys: shown.map((k) => ({ ...k, bundle: bundleOf(k.scopes), display: `${k.prefix}…${k.last4}`, last_used: used.get(k.id) ?? null, active: !k.revoked_at })),
    active,
    limit: limits.apiKeysLimit,
    plan,
    api: limits.api,
    atLimit: limits.apiKeysLimit !== null && active >= limits.apiKeysLimit,
    bundles: [...BUNDLES, 'custom'],
    scopes: ORG_SCOPES,
    modes: ['test', 'live'],
    pager: pages > 1 ? { page: pageNo, pages, prev: pageNo > 1 ? pageNo - 1 : null, next: pageNo < pages ? pageNo + 1 : null } : null,
    ...extra,
    values,
  }, status);
}

export function keyPages(router: Router, rt: Runtime): void {
  const org = withOrg(rt);
  const admin = requireRole(rt, 'admin');

  router.get('/o/:org/keys', org, (req, res) => page(rt, req, res));

  router.post('/o/:org/keys', org, admin, async (req, res) => {
    const name = field(req.body, 'name');
    const bundle = field(req.body, 'bundle');
    const mode = field(req.body, 'mode') || rt.config.serviceMode;
    const picked = fieldList(req.body, 'scopes');
    const values = { name, bundle, mode, scopes: picked };
    const errors: { field: string; message: string }[] = [];
    if (name.length > 100) errors.push({ field: 'name', message: 'must be at most 100 characters' });
    if (mode !== 'test' && mode !== 'live') errors.push({ field: 'mode', message: 'must be test or live' });
    let scopes: ReturnType<typeof bundleScopes> = [];
    if (isBundle(bundle)) scopes = bundleScopes(bundle);
    else if (bundle === 'custom') {
      try {
        scopes = parseScopes(picked, 'organization');
      } catch (err) {
        errors.push({ field: 'scopes', message: (err as Error).message });
      }
    } else errors.push({ field: 'bundle', message: `must be one of ${BUNDLES.join(', ')} or custom` });
    if (errors.length) return page(rt, req, res, { values, errors }, 400);
    let created;
    try {
      created = await createApiKey(rt.database.db, { organizationId: orgOf(res).id }, { mode: mode as 'test' | 'live', scopes, name: name || null });
    } catch (err) {
      const errs = formErrors(err);
      if (!errs) throw err;
      return page(rt, req, res, { values, errors: errs }, 403);
    }
    await audit(rt, res, 'api_key.created', created.key.id);
    // The one showing of the secret: in this answer's body only (no redirect, no URL, no log), never cached.
    return render(rt, req, res, 'keys-created', { key: { ...created.key, display: `${created.key.prefix}…${created.key.last4}` }, secret: created.secret });
  });

  // Confirmation page (works without JavaScript), then the POST that revokes.
  router.get('/o/:org/keys/:id/revoke', org, admin, async (req, res) => {
    if (!(await ownedBy(rt, 'api_keys', String(req.params.id), orgOf(res).id))) return notFoundPage(rt)(req, res, () => {});
    const key = await rt.database.db.selectFrom('api_keys').select(['id', 'name', 'prefix', 'last4']).where('id', '=', String(req.params.id).toLowerCase()).executeTakeFirstOrThrow();
    return render(rt, req, res, 'keys-revoke', { key: { ...key, display: `${key.prefix}…${key.last4}` } });
  });
  router.post('/o/:org/keys/:id/revoke', org, admin, async (req, res) => {
    if (!(await ownedBy(rt, 'api_keys', String(req.params.id), orgOf(res).id))) return notFoundPage(rt)(req, res, () => {});
    const key = await revokeKey(rt.database.db, String(req.params.id));
    await audit(rt, res, 'api_key.revoked', key.id);
    flash(req, 'ok', 'keys.revoked_done');
    return seeOther(req, res, `/dashboard/o/${orgOf(res).id}/keys`);
  });
}
