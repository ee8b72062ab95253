/**
 * /organizations*: an account key provisions, lists, archives and restores
 * the account's organizations (audience 'account'). An id the account does
 * not own is 404, exactly like an unknown one. Archive and restore only need
 * the account key: the archived organization's own keys stay refused.
 */
import { getAccount } from '../accounts/accounts.ts';
import type { NewOrganizationInput } from '../commands/organization/commands.ts';
import {
  archiveOrganization,
  provisionOrganization,
  provisioningClaims,
  restoreOrganization,
  type OrganizationResult,
  type OrganizationWrite,
} from '../commands/organization/handler.ts';
import { findOrganization, getOrganization, listOrganizations } from '../queries/organizations.ts';
import { DomainError, notFound, validationError, type FieldError } from '../shared/errors.ts';
import { PLAN_LIMITS } from '../accounts/plans.ts';
import { commandInput } from './command-input.ts';
import { organizationReply, replyAfterWrite } from './organization-reply.ts';
import { validateNewOrganization } from '../commands/organization/validate.ts';
import { asRecord, fieldErrorsOf, withTakenClaims } from './body-check.ts';
import { wellFormedIce } from '../commands/field-rules.ts';
import type { RequestContext, RouteSpec } from './route.ts';
import { organizationCreateBody, organizationListQuery, organizationResponse } from './schemas/organizations.ts';

type CreateBody = Omit<NewOrganizationInput, 'billing_address'> & {
  address_street?: string | null;
  address_city?: string | null;
  address_postal_code?: string | null;
  address_country?: string | null;
};

interface ListQuery {
  page: number;
  per_page: number;
  order: 'asc' | 'desc';
  include_archived: boolean;
}

/** The reference's flat address fields, stored as billing_address (docs/api-decisions.md "Representations"). */
function createInput(body: CreateBody): NewOrganizationInput {
  const { address_street, address_city, address_postal_code, address_country, ...profile } = body;
  return { ...profile, billing_address: { street: address_street, city: address_city, postal_code: address_postal_code, country: address_country } };
}

/** The domain names billing_address.city and the like: this endpoint's client sent address_city (createInput's `address_<part>`). */
function asSentFields(fields: FieldError[]): FieldError[] {
  return fields.map((f) => (f.field.startsWith('billing_address.') ? { ...f, field: `address_${f.field.slice('billing_address.'.length)}` } : f));
}

/** `run`, its VALIDATION_ERROR naming the fields as sent. */
async function withSentFields<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof DomainError) || err.code !== 'VALIDATION_ERROR') throw err;
    const fields = (err.details as { fields?: FieldError[] } | undefined)?.fields;
    throw fields ? validationError(asSentFields(fields), err.message) : err;
  }
}

const writeOf = (ctx: RequestContext): OrganizationWrite => commandInput(ctx);

/** Runs an action on an organization of the key's account; any other id is 404. */
async function onOwned(ctx: RequestContext, id: string, action: (w: OrganizationWrite, id: string) => Promise<OrganizationResult>) {
  const owned = await findOrganization(ctx.rt.database.db, id, ctx.key.accountId);
  if (!owned) throw notFound('Organization');
  return replyAfterWrite(ctx, await action(writeOf(ctx), owned.id)); // the stored id: streams are named in lower case
}

export const organizationsRoutes: RouteSpec[] = [
  {
    operationId: 'listOrganizations',
    method: 'get',
    path: '/organizations',
    summary: "List the account's organizations (archived ones with include_archived=true)",
    tag: 'Organizations',
    scope: 'organizations:read',
    audience: 'account',
    query: organizationListQuery,
    response: { type: 'array', items: organizationResponse },
    async handler(ctx, input: { query: ListQuery }) {
      const { page, per_page: perPage, order, include_archived: includeArchived } = input.query;
      const { data, total } = await listOrganizations(ctx.rt.database.db, ctx.key.accountId, { page, perPage, order, includeArchived });
      return { data, pagination: { total, page, perPage, totalPages: Math.ceil(total / perPage) } };
    },
  },
  {
    operationId: 'createOrganization',
    method: 'post',
    path: '/organizations',
    summary: 'Provision a new organization (legal entity) under the account',
    tag: 'Organizations',
    scope: 'organizations:write',
    audience: 'account',
    body: organizationCreateBody,
    // A taken ICE beside the schema's errors too, unless the plan's cap (which comes first) would refuse the creation.
    async check(ctx, body) {
      const ice = asRecord(body).ice;
      const account = wellFormedIce(ice) === null ? null : await getAccount(ctx.rt.database.db, ctx.accountId); // no ICE to judge: no read
      const claims = account ? await provisioningClaims(ctx.rt.store, account.id, PLAN_LIMITS[account.plan].entityCap, ice) : [];
      return withTakenClaims(ctx, asSentFields(fieldErrorsOf(() => validateNewOrganization(createInput(asRecord(body))))), claims, null);
    },
    successStatus: 201,
    location: '/organizations/:id',
    response: organizationResponse,
    errors: ['VALIDATION_ERROR', 'ENTITY_CAP_REACHED'],
    async handler(ctx, input: { body: CreateBody }) {
      const account = await getAccount(ctx.rt.database.db, ctx.key.accountId);
      if (!account) throw notFound('Account');
      const result = await withSentFields(() =>
        provisionOrganization(writeOf(ctx), {
          organization_id: ctx.newId('organization'),
          account_id: account.id,
          entity_cap: PLAN_LIMITS[account.plan].entityCap,
          profile: createInput(input.body),
        }),
      );
      return replyAfterWrite(ctx, result, 201);
    },
  },
  {
    operationId: 'getOrganizationById',
    method: 'get',
    path: '/organizations/:id',
    summary: 'Read one organization of the account',
    tag: 'Organizations',
    scope: 'organizations:read',
    audience: 'account',
    response: organizationResponse,
    async handler(ctx, input) {
      return organizationReply(await getOrganization(ctx.rt.database.db, input.params.id, ctx.key.accountId));
    },
  },
  {
    operationId: 'archiveOrganization',
    method: 'post',
    path: '/organizations/:id/archive',
    summary: 'Archive an organization: frozen everywhere, nothing deleted, reversible',
    tag: 'Organizations',
    scope: 'organizations:archive',
    audience: 'account',
    response: organizationResponse,
    errors: ['ALREADY_ARCHIVED', 'VERSION_CONFLICT'],
    handler: (ctx, input) => onOwned(ctx, input.params.id, archiveOrganization),
  },
  {
    operationId: 'restoreOrganization',
    method: 'post',
    path: '/organizations/:id/restore',
    summary: 'Restore an archived organization: it resumes normal operation at once',
    tag: 'Organizations',
    scope: 'organizations:archive',
    audience: 'account',
    response: organizationResponse,
    errors: ['NOT_ARCHIVED', 'VERSION_CONFLICT'],
    handler: (ctx, input) => onOwned(ctx, input.params.id, restoreOrganization),
  },
];
