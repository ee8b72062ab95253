/**
 * One pass over the whole log in global order, keeping each stream's head
 * (last revision and hash), per organization. `audit verify` and the digest
 * writer both build on it, so they agree on what "an organization's streams
 * as of a position" means: every stream whose events carry that
 * metadata.organization_id, except the organization's own audit stream.
 */
import type { EventStore, RecordedEvent } from '../eventstore/types.ts';
import type { StreamHead } from './merkle.ts';

export const AUDIT_STREAM_PREFIX = 'audit-';
export const DIGEST_EVENT = 'AuditDigestRecorded';

export function auditStream(organizationId: string): string {
  return `${AUDIT_STREAM_PREFIX}${organizationId}`;
}

/** Events per page of a pass over the log. */
export const LOG_PAGE = 5000;

export class OrganizationHeads {
  /** organization id -> stream -> head */
  private readonly byOrg = new Map<string, Map<string, StreamHead>>();

  /** An event of `organizationId` (its metadata's organization_id) is now its stream's head. */
  record(organizationId: unknown, stream: string, revision: number, hash: string): void {
    if (typeof organizationId !== 'string' || stream.startsWith(AUDIT_STREAM_PREFIX)) return;
    let heads = this.byOrg.get(organizationId);
    if (!heads) this.byOrg.set(organizationId, (heads = new Map()));
    const head = heads.get(stream);
    if (head) {
      head.revision = revision;
      head.hash = hash;
    } else {
      heads.set(stream, { stream, revision, hash });
    }
  }

  of(organizationId: string): StreamHead[] {
    return [...(this.byOrg.get(organizationId)?.values() ?? [])];
  }
}

/**
 * The whole log in global order, page by page. The next page is requested
 * before the current one is handed out, so the database reads (and the
 * driver decodes) page n+1 while the caller hashes or writes page n: the two
 * costs overlap instead of adding up.
 */
export function logPages(store: EventStore, pageSize = LOG_PAGE): AsyncGenerator<RecordedEvent[]> {
  return pagesAhead((after) => store.readAll(after, pageSize));
}

/** logPages over any reader of the log in pages (entries carrying their position). */
export async function* pagesAhead<T extends { position: string }>(read: (after: string | null) => Promise<T[]>): AsyncGenerator<T[]> {
  let next = read(null);
  for (;;) {
    const page = await next;
    if (page.length === 0) return;
    // Only an empty page ends the log (an adapter may return short pages before its end).
    next = read(page[page.length - 1].position);
    // A consumer that stops early leaves the read ahead in flight: its failure must not go unhandled.
    next.catch(() => {});
    yield page;
  }
}

/** Calls `visit` with every event of the log in global order, page by page. */
export async function foldLog(
  store: EventStore,
  visit: (event: RecordedEvent) => void,
  onPage?: (events: number, position: string) => void,
  until?: string | null,
): Promise<string | null> {
  let cursor: string | null = null;
  let count = 0;
  for await (const page of logPages(store)) {
    for (const event of page) {
      if (until !== undefined && until !== null && event.position > until) return cursor;
      visit(event);
      cursor = event.position;
      count++;
    }
    onPage?.(count, cursor!);
  }
  return cursor;
}
