/**
 * Organizations: the account's legal entities, provision (owner), archive
 * and restore (owner), through the same organization commands as the API
 * and the CLI (same validation, same entity cap, the user as the actor).
 */
import type { Request, Response, Router } from 'express';
import { v7 as uuidv7 } from 'uuid';
import { isUuid } from '../../shared/ids.ts';
import { PLAN_LIMITS } from '../../accounts/plans.ts';
import { archiveOrganization, provisionOrganization, restoreOrganization, type OrganizationResult, type OrganizationWrite } from '../../commands/organization/handler.ts';
import { findOrganization, listOrganizations } from '../../queries/organizations.ts';
import type { Runtime } from '../../runtime.ts';
import { field, flash, formErrors, metadataOf, notFoundPage, render, requireRole, userOf, seeOther } from '../context.ts';

const PROFILE_FIELDS = ['legal_name', 'ice', 'rc', 'if_number', 'email', 'phone', 'address_street', 'address_city', 'address_postal_code'] as const;

async function page(rt: Runtime, req: Request, res: Response, extra: Record<string, unknown> = {}, status = 200) {
  const user = userOf(res);
  const { data, total } = await listOrganizations(rt.database.db, user.account_id, { page: 1, perPage: 100, order: 'asc', includeArchived: true });
  const plan = res.locals.account.plan as keyof typeof PLAN_LIMITS;
  return render(rt, req, res, 'organizations', { organizations: data, used: total, cap: PLAN_LIMITS[plan].entityCap, plan, values: {}, ...extra }, status);
}

/** Waits for the read model (read your writes), as the API's answers do. */
async function settle(rt: Runtime, result: OrganizationResult): Promise<void> {
  if (result.position) await rt.progress.waitFor(result.position, 5000);
}

export function organizationPages(router: Router, rt: Runtime): void {
  router.get('/organizations', (req, res) => page(rt, req, res));

  router.post('/organizations', requireRole(rt, 'owner'), async (req, res) => {
    const values = Object.fromEntries(PROFILE_FIELDS.map((f) => [f, field(req.body, f)]));
    const opt = (v: string) => (v === '' ? null : v);
    const user = userOf(res);
    const plan = res.locals.account.plan as keyof typeof PLAN_LIMITS;
    const id = uuidv7();
    try {
      const result = await provisionOrganization({ store: rt.store, metadata: metadataOf(res, null) }, {
        organization_id: id,
        account_id: user.account_id,
        entity_cap: PLAN_LIMITS[plan].entityCap,
        profile: {
          legal_name: values.legal_name,
          ice: opt(values.ice),
          rc: opt(values.rc),
          if_number: opt(values.if_number),
          email: opt(values.email),
          phone: opt(values.phone),
          billing_address: { street: opt(values.address_street), city: opt(values.address_city), postal_code: opt(values.address_postal_code) },
        },
      });
      await settle(rt, result);
    } catch (err) {
      const errors = formErrors(err);
      if (!errors) throw err;
      return page(rt, req, res, { values, errors }, 400);
    }
    flash(req, 'ok', 'orgs.created', { name: values.legal_name });
    return seeOther(req, res, '/dashboard/organizations');
  });

  const stateChange = (action: (w: OrganizationWrite, id: string) => Promise<OrganizationResult>, done: string) => async (req: Request, res: Response) => {
    const id = String(req.params.id);
    const owned = isUuid(id) ? await findOrganization(rt.database.db, id.toLowerCase(), userOf(res).account_id) : null;
    if (!owned) return notFoundPage(rt)(req, res, () => {});
    try {
      await settle(rt, await action({ store: rt.store, metadata: metadataOf(res, owned.id) }, owned.id));
    } catch (err) {
      const errors = formErrors(err);
      if (!errors) throw err;
      return page(rt, req, res, { errors }, 409);
    }
    flash(req, 'ok', done);
    return seeOther(req, res, '/dashboard/organizations');
  };
  router.post('/organizations/:id/archive', requireRole(rt, 'owner'), stateChange(archiveOrganization, 'orgs.archived_done'));
  router.post('/organizations/:id/restore', requireRole(rt, 'owner'), stateChange(restoreOrganization, 'orgs.restored_done'));

  // The switcher (a plain GET form): opens the same section for the chosen organization.
  router.get('/switch', (req, res) => {
    const org = typeof req.query.org === 'string' && isUuid(req.query.org) ? req.query.org : null;
    const section = typeof req.query.section === 'string' && ['keys', 'webhooks', 'deliveries', 'invoices'].includes(req.query.section) ? req.query.section : 'keys';
    res.redirect(303, org ? `/dashboard/o/${org}/${section}` : '/dashboard/organizations');
  });
}
