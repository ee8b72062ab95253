/**
 * Where webhooks may go (docs/api-decisions.md "Webhooks"): https:// URLs whose every
 * address is publicly routable. Checked twice:
 * - at configuration (`webhook add`): clear error for the operator;
 * - at connection time, in the socket's own DNS lookup (guardedLookup), so
 *   the address connected to is the address checked: a name that resolved to
 *   a public address at configuration and to 127.0.0.1 now (DNS rebinding)
 *   is refused. TLS still uses the URL's host for SNI and certificate checks.
 * WEBHOOK_ALLOW_INSECURE=true turns both off (local receivers in tests).
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { forbiddenAddressReason } from './address-ranges.ts';

export { forbiddenAddressReason } from './address-ranges.ts';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Every address a name resolves to (tests inject their own). */
export type Resolver = (hostname: string, family?: number) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname, family) =>
  dns.promises.lookup(hostname, { all: true, family: family ?? 0, verbatim: true });

/** Raised when a URL or one of its addresses is not allowed. */
export class AddressNotAllowedError extends Error {
  readonly code = 'EADDRNOTALLOWED';
  constructor(message: string) {
    super(message);
    this.name = 'AddressNotAllowedError';
  }
}

/** `[::1]` -> `::1`: URL keeps the brackets of an IPv6 literal. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** Throws unless every address is allowed (one bad address spoils the name). */
export function assertAllowed(host: string, addresses: readonly ResolvedAddress[]): void {
  if (addresses.length === 0) throw new AddressNotAllowedError(`${host} does not resolve to any address`);
  for (const { address } of addresses) {
    const reason = forbiddenAddressReason(address);
    if (reason) {
      const via = address === host ? '' : ` (${host} resolves to ${address})`;
      throw new AddressNotAllowedError(`${address} is a ${reason} address${via}; webhooks go to public addresses only`);
    }
  }
}

/** The longest endpoint URL taken: listings and delivery pages show it whole, and common servers refuse longer request lines. */
export const MAX_ENDPOINT_URL_LENGTH = 2048;

/**
 * The configuration-time check of an endpoint URL; returns it normalized.
 * Throws AddressNotAllowedError (or TypeError-free messages) for the operator.
 */
export async function checkEndpointUrl(raw: string, options: { allowInsecure: boolean; resolve?: Resolver }): Promise<string> {
  if (raw.length > MAX_ENDPOINT_URL_LENGTH) throw new AddressNotAllowedError(`the URL must be at most ${MAX_ENDPOINT_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AddressNotAllowedError(`"${raw}" is not a URL (expected https://host/path)`);
  }
  if (url.username || url.password) throw new AddressNotAllowedError('the URL must not embed credentials (listings would show them)');
  if (url.port === '0') throw new AddressNotAllowedError('port 0 cannot be connected to');
  // As stored: the parser percent-encodes what it must (an "é" becomes six characters).
  if (url.toString().length > MAX_ENDPOINT_URL_LENGTH) throw new AddressNotAllowedError(`the URL must be at most ${MAX_ENDPOINT_URL_LENGTH} characters once encoded`);
  if (options.allowInsecure) {
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new AddressNotAllowedError('the URL must be http:// or https://');
    return url.toString();
  }
  if (url.protocol !== 'https:') throw new AddressNotAllowedError('the URL must use https:// (set WEBHOOK_ALLOW_INSECURE=true for local tests)');
  const host = hostOf(url);
  if (isIP(host)) {
    assertAllowed(host, [{ address: host, family: isIP(host) }]);
  } else {
    let addresses: ResolvedAddress[];
    try {
      addresses = await (options.resolve ?? systemResolver)(host);
    } catch (err) {
      throw new AddressNotAllowedError(`${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    assertAllowed(host, addresses);
  }
  return url.toString();
}

/**
 * A `lookup` for http(s).Agent / request options: resolves the name itself,
 * refuses the connection when any address is forbidden, and hands the socket
 * only checked addresses. Handles both shapes Node asks for (`all: true`
 * with autoSelectFamily, a single address otherwise).
 */
export function guardedLookup(resolve: Resolver = systemResolver): LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (...args: any[]) => void) => {
    const family = typeof options?.family === 'number' ? options.family : 0;
    resolve(hostname, family).then(
      (addresses) => {
        try {
          assertAllowed(hostname, addresses);
        } catch (err) {
          return callback(err);
        }
        if (options?.all) return callback(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      },
      (err) => callback(err),
    );
  }) as LookupFunction;
}

/** Connection-time check of an IP-literal host (Node does not call lookup for those). */
export function assertLiteralAllowed(url: URL): void {
  const host = hostOf(url);
  if (isIP(host)) assertAllowed(host, [{ address: host, family: isIP(host) }]);
}
