/**
 * How the organization endpoints answer: a read from the organizations read
 * model, and a write through answerAfterWrite (src/api/answer.ts), which
 * waits for the organizations projector and falls back to the decided
 * organization (shown the way a read shows it) if it is behind.
 */
import type { OrganizationResult } from '../commands/organization/handler.ts';
import { getOrganization, present, type VersionedOrganization } from '../queries/organizations.ts';
import { notFound } from '../shared/errors.ts';
import { answerAfterWrite, type WrittenResource } from './answer.ts';
import type { JsonReply, RequestContext } from './route.ts';

export function organizationReply(found: VersionedOrganization | null, status = 200): JsonReply {
  if (!found) throw notFound('Organization');
  return { status, data: found.view, version: found.version };
}

const writtenOrganization: WrittenResource<OrganizationResult> = {
  name: 'organization',
  projectors: ['organizations'],
  position: (result) => result.position,
  version: (result) => result.state.organization!.version,
  async read(ctx, result) {
    const found = await getOrganization(ctx.rt.database.db, result.state.organization!.id);
    return found && { data: found.view, version: found.version };
  },
  async decided(ctx, result) {
    const [found] = await present(ctx.rt.database.db, [result.state.organization!]);
    return { data: found.view, version: found.version };
  },
};

export function replyAfterWrite(ctx: RequestContext, result: OrganizationResult, status = 200): Promise<JsonReply> {
  return answerAfterWrite(ctx, writtenOrganization, result, status);
}
