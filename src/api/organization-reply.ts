/**
 * How the organization endpoints answer. A write answers once the projectors
 * have passed its position (read your writes), from the read model like any
 * GET. Should the wait time out (a projector stalled), the write has still
 * happened: it answers from the snapshot it decided rather than report a
 * failure for a change that was made.
 */
import type { OrganizationResult } from '../commands/organization/handler.ts';
import { getOrganization, present, type VersionedOrganization } from '../queries/organizations.ts';
import { notFound } from '../shared/errors.ts';
import type { JsonReply, RequestContext } from './route.ts';

export function organizationReply(found: VersionedOrganization | null, status = 200): JsonReply {
  if (!found) throw notFound('Organization');
  return { status, data: found.view, version: found.version };
}

export async function replyAfterWrite(ctx: RequestContext, result: OrganizationResult, status = 200): Promise<JsonReply> {
  const organization = result.state.organization!;
  const db = ctx.rt.database.db;
  if (result.position !== null && !(await ctx.rt.progress.waitFor(result.position))) {
    ctx.rt.logger.warn({ request_id: ctx.requestId, position: result.position }, 'projections did not catch up; answering from the decided state');
    return organizationReply((await present(db, [organization]))[0], status);
  }
  return organizationReply(await getOrganization(db, organization.id), status);
}
