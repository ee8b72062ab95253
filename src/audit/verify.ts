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
import { bodyDigest, canonicalBodyFromText, chainStep, GENESIS_HASH, sha256Hex } from '../eventstore/chain.ts';
import type { EventStore, RecordedEvent, TextLogEntry } from '../eventstore/types.ts';
import { auditStream, DIGEST_EVENT, foldLog, LOG_PAGE, OrganizationHeads, pagesAhead } from './log-fold.ts';
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

/** What verify needs of one event besides its organization and body digest, whichever way the store hands it over. */
interface LoggedEvent {
  id: string;
  stream: string;
  revision: number;
  hash: string;
}

type TextEvent = NonNullable<TextLogEntry['event']>;

/** The body digest of an event read as stored text (readAllText), from that text as it is: no parsing, no printing. */
function storedBodyDigest(e: TextEvent): string {
  return sha256Hex(canonicalBodyFromText(e.id, e.type, e.data, e.metadata));
}

/**
 * The body digest by the definition: the stored text parsed and printed in
 * RFC 8785 again; undefined for a text that is not JSON. Only asked about an
 * event whose stored text does not hash to its hash, to say which break it
 * is: a stored text that differs from the hashed one is a break even when it
 * parses to the same values, since the service stores nothing but the
 * hashed text (docs/audit.md "What the log stores").
 */
function reparsedBodyDigest(e: TextEvent): string | undefined {
  try {
    return bodyDigest({ id: e.id, type: e.type, data: JSON.parse(e.data), metadata: JSON.parse(e.metadata) });
  } catch {
    return undefined;
  }
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

  /** Digests recorded before `position` are due: the heads now are the heads as of their position. */
  const digestsBefore = (position: string) => {
    while (digests.length > 0 && (digests[0].data.position ?? '') < position) checkDigest(digests.shift()!);
  };

  /** Checks one event of `organizationId` whose body digest is `digest` (`valuesDigest`: the digest of its parsed values, which only words the reason of a break). */
  const check = (e: LoggedEvent, organizationId: unknown, position: string, digest: string, valuesDigest?: () => string | undefined) => {
    if (org !== null && organizationId !== org) return;
    events++;
    const prev = streams.get(e.stream);
    const expectedRevision = prev ? prev.revision + 1 : 0;
    const previousHash = prev?.hash ?? GENESIS_HASH;
    const expected = chainStep(previousHash, e.stream, e.revision, digest);
    if (expected !== e.hash || e.revision !== expectedRevision) {
      const values = expected !== e.hash && e.revision === expectedRevision ? valuesDigest?.() : undefined;
      report({
        kind: 'event',
        stream: e.stream,
        revision: e.revision,
        event_id: e.id,
        position,
        expected_hash: expected,
        found_hash: e.hash,
        reason:
          e.revision > expectedRevision
            ? `revision ${expectedRevision}${e.revision - expectedRevision > 1 ? `..${e.revision - 1}` : ''} missing (deleted?)`
            : e.revision < expectedRevision
              ? `revision ${e.revision} comes after revision ${prev!.revision} in the log (reordered?)`
              : values !== undefined && chainStep(previousHash, e.stream, e.revision, values) === e.hash
                ? 'the stored JSON text is not the hashed text, though it parses to the same values: rewritten outside the service (spaces, member order, number form or repeated members)'
                : 'the stored hash does not match the event (type, data, metadata or id changed, or a previous event replaced)',
      });
    }
    // The highest revision seen: after two swapped events, the next one is in place again.
    streams.set(e.stream, { revision: Math.max(e.revision, prev?.revision ?? -1), hash: e.hash });
    heads.record(organizationId, e.stream, e.revision, e.hash);
  };

  const readText = store.readAllText?.bind(store);
  if (readText) {
    // The stored text, hashed as it is (docs/audit.md "What the log stores"); another organization's events come as bare positions.
    let count = 0;
    for await (const page of pagesAhead((after) => readText(after, LOG_PAGE, org))) {
      for (const { position, event } of page) {
        digestsBefore(position);
        if (event) check(event, event.organization_id, position, storedBodyDigest(event), () => reparsedBodyDigest(event));
      }
      count += page.length;
      options.onProgress?.(count);
    }
  } else {
    const visit = (e: RecordedEvent) => {
      digestsBefore(e.position);
      check(e, e.metadata?.organization_id, e.position, bodyDigest(e));
    };
    await foldLog(store, visit, (n) => options.onProgress?.(n));
  }
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
