/**
 * Merkle tree hash of an organization's stream heads (docs/audit.md
 * "Digests"), the construction of certificate-transparency logs (RFC 6962
 * section 2.1) with SHA-256:
 *
 *   leaf(d)   = SHA-256(0x00 || d),  d = UTF-8(stream "\n" revision "\n" hash)
 *   node(l,r) = SHA-256(0x01 || l || r)
 *   MTH([])   = SHA-256("")
 *   MTH(D[n]) = node(MTH(D[0:k]), MTH(D[k:n])), k the largest power of two < n
 *
 * Leaves are sorted by stream name (JavaScript string order, i.e. UTF-16 code
 * units; stream names are ASCII, so this is also byte order).
 */
import { createHash } from 'node:crypto';

export interface StreamHead {
  stream: string;
  revision: number;
  hash: string;
}

const LEAF = Buffer.from([0]);
const NODE = Buffer.from([1]);

function leafHash(head: StreamHead): Buffer {
  return createHash('sha256').update(LEAF).update(`${head.stream}\n${head.revision}\n${head.hash}`, 'utf8').digest();
}

function treeHash(leaves: Buffer[], from: number, to: number): Buffer {
  const n = to - from;
  if (n === 1) return leaves[from];
  let k = 1;
  while (k * 2 < n) k *= 2;
  return createHash('sha256').update(NODE).update(treeHash(leaves, from, from + k)).update(treeHash(leaves, from + k, to)).digest();
}

/** Hex Merkle root of the heads (any order given; sorted by stream here). */
export function merkleRoot(heads: StreamHead[]): string {
  if (heads.length === 0) return createHash('sha256').digest('hex');
  const sorted = [...heads].sort((a, b) => (a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : 0));
  return treeHash(sorted.map(leafHash), 0, sorted.length).toString('hex');
}
