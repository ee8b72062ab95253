/**
 * Digests: each organization's stream heads folded into a Merkle root
 * (./merkle.ts) and appended to its `audit-<organization>` stream as
 * `AuditDigestRecorded { organization_id, position, streams, events, root }`,
 * where `position` is the log position the heads were taken at. The root is
 * what an auditor writes down or has notarized: `audit verify` recomputes it
 * from the log and any later change to the organization's history before
 * that position makes it differ. Written daily by the digest worker
 * (src/workers/audit-digest.ts) and on demand by `audit digest`.
 */
import { v7 as uuidv7 } from 'uuid';
import type { EventStore } from '../eventstore/types.ts';
import { auditStream, DIGEST_EVENT, foldLog, OrganizationHeads } from './log-fold.ts';
import { merkleRoot } from './merkle.ts';
import type { DigestData } from './verify.ts';

export interface RecordedDigest extends DigestData {
  events: number;
  stream: string;
  revision: number;
}

/** One pass over the log up to its current head, then one digest per organization. */
export async function recordDigests(store: EventStore, organizations: string[], now = new Date()): Promise<RecordedDigest[]> {
  const until = await store.headPosition();
  const heads = new OrganizationHeads();
  await foldLog(store, (e) => heads.record(e.metadata?.organization_id, e.stream, e.revision, e.hash), undefined, until);
  const out: RecordedDigest[] = [];
  for (const organizationId of organizations) {
    const of = heads.of(organizationId);
    const data: DigestData & { events: number } = {
      organization_id: organizationId,
      position: until,
      streams: of.length,
      events: of.reduce((n, h) => n + h.revision + 1, 0),
      root: merkleRoot(of),
    };
    const stream = auditStream(organizationId);
    const result = await store.appendToStream(
      stream,
      [
        {
          id: uuidv7(),
          type: DIGEST_EVENT,
          data,
          metadata: {
            organization_id: organizationId,
            actor: 'system',
            request_id: null,
            correlation_id: null,
            causation_id: null,
            occurred_at: now.toISOString(),
          },
        },
      ],
      'any',
    );
    out.push({ ...data, stream, revision: result.nextRevision });
  }
  return out;
}
