/**
 * `audit verify`: recomputes every stream's hash chain and every digest of
 * the audit streams from the log alone, in one pass in global order, and
 * lists what does not match (docs/audit.md "Verifying"). It only reads: a
 * break is reported, never repaired.
 *
 * Each event is checked against its stored predecessor, so one tampered event
 * is one break (the events after it still chain to it), and several
 * independent edits are all found. A deleted event shows as the next one's
 * break (a revision is missing and its hash chains to the missing event);
 * swapped events as breaks at both; a deleted tail or stream as a digest that
 * no longer matches.
 */
import { bodyDigest, chainStep, GENESIS_HASH } from '../eventstore/chain.ts';
import type { EventStore, RecordedEvent } from '../eventstore/types.ts';
import { auditStream, DIGEST_EVENT, foldLog, OrganizationHeads } from './log-fold.ts';
import { merkleRoot } from './merkle.ts';

/** How many breaks a report lists (all are counted). */
const MAX_LISTED = 100;

export interface Break {
  kind: 'event' | 'digest';
  stream: string;
  revision: number;
  event_id: string;
  position: string;
  /** What the log's content gives (event: its chained hash; digest: the Merkle root). */
  expected_hash: string;
  /** What is stored (event: its hash; digest: the root it recorded). */
  found_hash: string;
  reason: string;
}

export interface VerifyReport {
  ok: boolean;
  organization_id: string | null;
  events: number;
  streams: number;
  digests: number;
  breaks_count: number;
  first_break: Break | null;
  breaks: Break[];
}

export interface DigestData {
  organization_id: string;
  position: string | null;
  streams: number;
  root: string;
}

interface PendingDigest {
  event: RecordedEvent;
  data: DigestData;
}

export interface VerifyOptions {
  /** Only this organization's events (its streams and its audit stream). */
  organizationId?: string;
  /** Organizations whose audit streams hold digests to check (all of them when no organizationId). */
  organizations: string[];
  onProgress?: (events: number) => void;
}

export async function verifyLog(store: EventStore, options: VerifyOptions): Promise<VerifyReport> {
  const org = options.organizationId ?? null;
  const digests: PendingDigest[] = [];
  for (const o of org ? [org] : options.organizations) {
    for (const event of await store.readStream(auditStream(o))) {
      if (event.type === DIGEST_EVENT) digests.push({ event, data: event.data as DigestData });
    }
  }
  digests.sort((a, b) => ((a.data.position ?? '') < (b.data.position ?? '') ? -1 : 1));

  const breaks: Break[] = [];
  let breaksCount = 0;
  const report = (b: Break) => {
    breaksCount++;
    if (breaks.length < MAX_LISTED) breaks.push(b);
  };
  const streams = new Map<string, { revision: number; hash: string }>();
  const heads = new OrganizationHeads();
  let events = 0;
  let checkedDigests = 0;

  const checkDigest = ({ event, data }: PendingDigest) => {
    checkedDigests++;
    const root = merkleRoot(heads.of(data.organization_id));
    if (root !== data.root) {
      report({
        kind: 'digest',
        stream: event.stream,
        revision: event.revision,
        event_id: event.id,
        position: event.position,
        expected_hash: root,
        found_hash: data.root,
        reason: `the organization's streams as of ${data.position ?? 'the start'} do not give the recorded Merkle root (an event or stream was removed, added or changed)`,
      });
    }
  };

  const visit = (e: RecordedEvent) => {
    while (digests.length > 0 && (digests[0].data.position ?? '') < e.position) checkDigest(digests.shift()!);
    if (org !== null && e.metadata?.organization_id !== org) return;
    events++;
    const prev = streams.get(e.stream);
    const expectedRevision = prev ? prev.revision + 1 : 0;
    const expected = chainStep(prev?.hash ?? GENESIS_HASH, e.stream, e.revision, bodyDigest(e));
    if (expected !== e.hash || e.revision !== expectedRevision) {
      report({
        kind: 'event',
        stream: e.stream,
        revision: e.revision,
        event_id: e.id,
        position: e.position,
        expected_hash: expected,
        found_hash: e.hash,
        reason:
          e.revision > expectedRevision
            ? `revision ${expectedRevision}${e.revision - expectedRevision > 1 ? `..${e.revision - 1}` : ''} missing (deleted?)`
            : e.revision < expectedRevision
              ? `revision ${e.revision} comes after revision ${prev!.revision} in the log (reordered?)`
              : 'the stored hash does not match the event (type, data, metadata or id changed, or a previous event replaced)',
      });
    }
    // The highest revision seen: after two swapped events, the next one is in place again.
    streams.set(e.stream, { revision: Math.max(e.revision, prev?.revision ?? -1), hash: e.hash });
    heads.record(e);
  };

  await foldLog(store, visit, (n) => options.onProgress?.(n));
  while (digests.length > 0) checkDigest(digests.shift()!);
  breaks.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
  return {
    ok: breaksCount === 0,
    organization_id: org,
    events,
    streams: streams.size,
    digests: checkedDigests,
    breaks_count: breaksCount,
    first_break: breaks[0] ?? null,
    breaks,
  };
}
