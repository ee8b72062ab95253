/**
 * A UUID v7 derived from a seed UUID v7 and a label: the seed's 48-bit
 * timestamp (so it still sorts by creation time), the version and variant
 * bits, and the rest from SHA-256(seed, label). The same seed and label give
 * the same id; different labels give unrelated ids.
 *
 * Used for the resources a request with an Idempotency-Key creates: every
 * attempt of that request derives the same id, so an attempt that follows a
 * crash finds what the first one created instead of creating it again.
 */
import { createHash } from 'node:crypto';
import { isUuid } from './ids.ts';

export function derivedV7(seed: string, label: string): string {
  if (!isUuid(seed)) throw new TypeError(`seed must be a UUID, got ${seed}`);
  const time = seed.replace(/-/g, '').slice(0, 12).toLowerCase();
  const hash = createHash('sha256').update(`${seed.toLowerCase()}\n${label}`).digest('hex');
  const variant = ((parseInt(hash[3], 16) & 0x3) | 0x8).toString(16);
  const hex = `${time}7${hash.slice(0, 3)}${variant}${hash.slice(4, 19)}`;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
