/**
 * Signing secrets. A secret is `whsec_` + 40 random base62 characters
 * (~238 bits), shown once by `webhook add` / `rotate-secret`. HMAC needs the
 * secret itself, so it is stored (a hash would not do); how it is protected:
 * - never logged (no code path logs it; the logger also redacts `secret`),
 *   never listed (listings show `whsec_...` + the last 4 characters);
 * - sealed at rest with AES-256-GCM when WEBHOOK_SECRET_KEY (32 bytes, base64
 *   or hex) is set in the webhook and admin processes, so a database dump, a
 *   backup or an analysts' replica holds no usable secret. Without the key it
 *   is stored as is (the embedded single-machine default). Rows sealed with a
 *   key stay readable only with that key; plain rows stay readable either way.
 *   The key is 32 bytes written as 64 hex digits or as base64.
 */
import { createCipheriv, createDecipheriv, randomBytes, randomInt } from 'node:crypto';
import { webhookSecretKeyFrom } from '../../config.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SEALED_PREFIX = 'aes256gcm:';

export function generateSecret(length = 40): string {
  let out = 'whsec_';
  // randomInt is uniform (rejection sampling inside): no modulo bias.
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

/** `whsec_...AbCd`: enough to tell secrets apart, useless to an attacker. */
export function secretHint(secret: string): string {
  return `whsec_...${secret.slice(-4)}`;
}

export class SecretKeyError extends Error {
  constructor(message: string) {
    super(`WEBHOOK_SECRET_KEY: ${message}`);
    this.name = 'SecretKeyError';
  }
}

/**
 * The sealing key (WEBHOOK_SECRET_KEY, parsed and checked in src/config.ts),
 * or null when secrets are stored as is.
 */
export function sealingKey(env?: Record<string, string | undefined>): Buffer | null {
  return webhookSecretKeyFrom(env);
}

/** What goes into webhook_endpoints.secret. */
export function sealSecret(secret: string, key: Buffer | null = sealingKey()): string {
  if (!key) return secret;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
}

/** The secret back from a stored value. */
export function openSecret(stored: string, key: Buffer | null = sealingKey()): string {
  if (!stored.startsWith(SEALED_PREFIX)) return stored;
  if (!key) throw new SecretKeyError('is needed to read this endpoint secret (it was sealed with a key)');
  const raw = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  try {
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretKeyError('does not open this endpoint secret (sealed with another key)');
  }
}

/** openSecret with a small cache: senders open the same few secrets all day. */
export class SecretCache {
  private readonly cache = new Map<string, string>();
  constructor(private readonly key: Buffer | null = sealingKey()) {}

  open(stored: string): string {
    let secret = this.cache.get(stored);
    if (secret === undefined) {
      secret = openSecret(stored, this.key);
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(stored, secret);
    }
    return secret;
  }
}
