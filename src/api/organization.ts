/**
 * GET/PATCH /organization: the profile of the organization the key acts on
 * (its own, or X-Organization-Id for an account key). An archived
 * organization never gets here: the pipeline refuses it (FORBIDDEN,
 * organization_archived).
 */
import { iceClaims, updateOrganizationProfile } from '../commands/organization/handler.ts';
import type { OrganizationPatch } from '../commands/organization/commands.ts';
import { getOrganization } from '../queries/organizations.ts';
import { commandInput } from './command-input.ts';
import { organizationReply, replyAfterWrite } from './organization-reply.ts';
import { validateOrganizationPatch } from '../commands/organization/validate.ts';
import { asRecord, fieldErrorsOf, withTakenClaims } from './body-check.ts';
import { wellFormedIce } from '../commands/field-rules.ts';
import type { RouteSpec } from './route.ts';
import { organizationPatchBody, organizationResponse } from './schemas/organizations.ts';

export const organizationRoutes: RouteSpec[] = [
  {
    operationId: 'getOrganization',
    method: 'get',
    path: '/organization',
    summary: 'Read the organization profile, subscription and API quotas',
    tag: 'Organization',
    scope: 'organization:read',
    audience: 'organization',
    response: organizationResponse,
    async handler(ctx) {
      return organizationReply(await getOrganization(ctx.rt.database.db, ctx.organizationId!));
    },
  },
  {
    operationId: 'updateOrganization',
    method: 'patch',
    path: '/organization',
    summary: 'Update the organization profile (only the fields sent)',
    tag: 'Organization',
    scope: 'organization:write',
    audience: 'organization',
    body: organizationPatchBody,
    check: (ctx, body) => withTakenClaims(ctx, fieldErrorsOf(() => validateOrganizationPatch(asRecord(body))), iceClaims(wellFormedIce(asRecord(body).ice)), ctx.organizationId),
    response: organizationResponse,
    errors: ['VALIDATION_ERROR', 'VERSION_CONFLICT'],
    async handler(ctx, input: { body: OrganizationPatch | undefined }) {
      const result = await updateOrganizationProfile(commandInput(ctx), ctx.organizationId!, input.body ?? {});
      return replyAfterWrite(ctx, result);
    },
  },
];
