/**
 * The tamper-evident hash chain of every stream (docs/audit.md "The hash chain").
 * Both event store adapters and `audit verify` use these functions, so there is
 * one definition of the encoding:
 *
 *   body    = hex(SHA-256(JCS({ "id", "type", "data", "metadata" })))       (RFC 8785)
 *   hash[r] = hex(SHA-256(UTF-8(hash[r-1] "\n" stream "\n" r "\n" body)))   (r in decimal)
 *   hash[-1] = GENESIS_HASH (64 zeros)
 *
 * The body digest is computed where the event is created (Node), because JSON
 * canonicalization (src/eventstore/jcs.ts) needs a real JSON implementation; the chain step needs only the
 * previous hash, which only the store knows at append time, so the PostgreSQL
 * adapter computes it inside es_append (migration 0060) and the EventStoreDB
 * adapter here, with chainStep().
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './jcs.ts';

/** The "previous hash" of a stream's first event (revision 0). */
export const GENESIS_HASH = '0'.repeat(64);

export interface HashedFields {
  id: string;
  type: string;
  data: unknown;
  metadata: unknown;
}

/** RFC 8785 canonical JSON of the hashed fields of one event. */
export function canonicalBody(event: HashedFields): string {
  const text = canonicalJson({ id: event.id, type: event.type, data: event.data, metadata: event.metadata });
  if (text === undefined) throw new TypeError(`event ${event.id} cannot be encoded as JSON`);
  return text;
}

/**
 * canonicalBody put together from data and metadata already in RFC 8785 text
 * (as PostgreSQL stores them since migration 0103), without parsing them:
 * the same text as canonicalBody when they are (the members of the body in
 * their RFC 8785 order: data, id, metadata, type). docs/audit.md "What the
 * log stores" says why a match of its digest proves the texts are the hashed ones.
 */
export function canonicalBodyFromText(id: string, type: string, dataText: string, metadataText: string): string {
  return `{"data":${dataText},"id":${canonicalJson(id)},"metadata":${metadataText},"type":${canonicalJson(type)}}`;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** hex(SHA-256(JCS(id, type, data, metadata))). */
export function bodyDigest(event: HashedFields): string {
  return sha256Hex(canonicalBody(event));
}

/** One link of the chain: the event's hash from its predecessor's. */
export function chainStep(previousHash: string, stream: string, revision: number, body: string): string {
  return sha256Hex(`${previousHash}\n${stream}\n${revision}\n${body}`);
}

/** Hashes of events appended after `previousHash` (the stream's head, or GENESIS_HASH), starting at `firstRevision`. */
export function chainHashes(previousHash: string, stream: string, firstRevision: number, bodies: string[]): string[] {
  const out: string[] = [];
  let prev = previousHash;
  bodies.forEach((body, i) => {
    prev = chainStep(prev, stream, firstRevision + i, body);
    out.push(prev);
  });
  return out;
}
