/**
 * Steps 2 to 4 (docs/api-decisions.md "Keys, plans and quotas"), in this order: the key's kind against
 * the route's audience (and X-Organization-Id for account keys), the plan,
 * subscription and organization state, then the route's scope.
 */
import type { Request } from 'express';
import { isUuid } from '../../shared/ids.ts';
import type { Runtime } from '../../runtime.ts';
import { DomainError } from '../../shared/errors.ts';
import { PLAN_LIMITS } from '../../accounts/plans.ts';
import type { RouteSpec } from '../route.ts';
import type { OrganizationState, Principal } from './authenticate.ts';

function orgNotFound(): DomainError {
  return new DomainError('NOT_FOUND', 'Organization not found.');
}

async function ownedOrganization(rt: Runtime, accountId: string, id: string): Promise<OrganizationState> {
  if (!isUuid(id)) throw orgNotFound();
  const { rows } = await rt.database.pool.query({
    name: 'pipeline-owned-organization',
    text: 'select id, account_id, archived, api_enabled from organizations where id = $1 and account_id = $2',
    values: [id.toLowerCase(), accountId],
  });
  if (!rows[0]) throw orgNotFound();
  return { id: rows[0].id, accountId: rows[0].account_id, archived: rows[0].archived, apiEnabled: rows[0].api_enabled };
}

/**
 * The organization the request acts on: the key's own for an organization
 * key, X-Organization-Id for an account key, none on /organizations*.
 */
async function targetOrganization(rt: Runtime, req: Request, spec: RouteSpec, p: Principal): Promise<OrganizationState | null> {
  const header = req.header('x-organization-id')?.trim();
  if (spec.audience === 'account') {
    if (p.key.kind !== 'account') {
      throw new DomainError('ACCOUNT_KEY_REQUIRED', 'This endpoint needs an account-level key (svc_acct_).');
    }
    return null;
  }
  if (p.key.kind === 'organization') {
    // An organization key acts on its own organization only; naming another one is a client bug.
    if (header && header.toLowerCase() !== p.keyOrganization!.id) throw orgNotFound();
    return p.keyOrganization;
  }
  if (!header) {
    throw new DomainError('ORG_HEADER_REQUIRED', 'An account key must name the organization in the X-Organization-Id header.');
  }
  return ownedOrganization(rt, p.key.accountId, header);
}

function checkState(p: Principal, org: OrganizationState | null): void {
  if (!PLAN_LIMITS[p.plan].api) {
    throw new DomainError('API_TIER_NOT_SUPPORTED', `The ${p.plan} plan does not include API access. Upgrade to Professional or Fiduciaire.`);
  }
  if (p.subscription === 'expired') throw new DomainError('SUBSCRIPTION_EXPIRED', 'The subscription has expired. Renew it to use the API.');
  if (!org) return;
  // An archived entity is frozen everywhere; that outranks its API switch.
  if (org.archived) {
    throw new DomainError('FORBIDDEN', 'The organization is archived. Restore it to use it again.', { reason: 'organization_archived' });
  }
  if (!org.apiEnabled) throw new DomainError('API_DISABLED', 'API access is switched off for this organization.');
}

function checkScope(p: Principal, spec: RouteSpec): void {
  if (!p.key.scopes.includes(spec.scope)) {
    throw new DomainError('FORBIDDEN', `This API key lacks the scope ${spec.scope}.`, { required_scopes: [spec.scope] });
  }
}

/** Returns the id of the organization the request acts on (null on account routes). */
export async function authorize(rt: Runtime, req: Request, spec: RouteSpec, p: Principal): Promise<string | null> {
  const org = await targetOrganization(rt, req, spec, p);
  checkState(p, org);
  checkScope(p, spec);
  return org?.id ?? null;
}
