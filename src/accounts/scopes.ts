/**
 * Scope names and the three bundles of docs/api-decisions.md "Keys, plans and quotas". A key holds an
 * explicit list: no scope implies another, so a bundle is only a shorthand
 * that is expanded once, at key creation.
 */
/** Every scope a key can hold. */
export type Scope =
  | 'invoices:read' | 'invoices:write' | 'invoices:finalize' | 'invoices:send' | 'invoices:payment' | 'invoices:void' | 'invoices:export'
  | 'recurring:read' | 'recurring:write' | 'recurring:delete'
  | 'customers:read' | 'customers:write' | 'customers:delete'
  | 'organization:read' | 'organization:write'
  | 'webhooks:read' | 'webhooks:write'
  | 'organizations:read' | 'organizations:write' | 'organizations:archive';

// A Record forces this list to name every member of the Scope union.
const SCOPE_SET: Record<Scope, true> = {
  'invoices:read': true, 'invoices:write': true, 'invoices:finalize': true, 'invoices:send': true,
  'invoices:payment': true, 'invoices:void': true, 'invoices:export': true,
  'recurring:read': true, 'recurring:write': true, 'recurring:delete': true,
  'customers:read': true, 'customers:write': true, 'customers:delete': true,
  'organization:read': true, 'organization:write': true,
  'webhooks:read': true, 'webhooks:write': true,
  'organizations:read': true, 'organizations:write': true, 'organizations:archive': true,
};

export const ALL_SCOPES = Object.keys(SCOPE_SET) as Scope[];
export const ACCOUNT_SCOPES: readonly Scope[] = ['organizations:read', 'organizations:write', 'organizations:archive'];

export type Bundle = 'read_only' | 'invoicing' | 'full_access';
export const BUNDLES: readonly Bundle[] = ['read_only', 'invoicing', 'full_access'];

const READ_ONLY: Scope[] = ['invoices:read', 'recurring:read', 'customers:read', 'organization:read', 'webhooks:read'];
const INVOICING: Scope[] = [
  ...READ_ONLY,
  'invoices:write', 'invoices:finalize', 'invoices:send', 'invoices:payment', 'invoices:void', 'invoices:export',
  'customers:write', 'recurring:write',
];
const FULL_ACCESS: Scope[] = ALL_SCOPES.filter((s) => !ACCOUNT_SCOPES.includes(s));

const BUNDLE_SCOPES: Record<Bundle, readonly Scope[]> = { read_only: READ_ONLY, invoicing: INVOICING, full_access: FULL_ACCESS };

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPE_SET, value);
}

export function isBundle(value: string): value is Bundle {
  return (BUNDLES as readonly string[]).includes(value);
}

/**
 * The scopes of a bundle. For an account key the bundle also grants the
 * organizations:* scopes that match it (an account key exists to manage
 * organizations): read for read_only and invoicing, all three for full_access.
 */
export function bundleScopes(bundle: Bundle, kind: 'organization' | 'account' = 'organization'): Scope[] {
  const scopes = [...BUNDLE_SCOPES[bundle]];
  if (kind === 'account') scopes.push(...(bundle === 'full_access' ? ACCOUNT_SCOPES : (['organizations:read'] as Scope[])));
  return scopes;
}

/** Checks a list of scope names; throws an Error naming the first bad one. */
export function parseScopes(names: readonly string[], kind: 'organization' | 'account'): Scope[] {
  const out: Scope[] = [];
  for (const raw of names) {
    const name = raw.trim();
    if (name === '') continue;
    if (!isScope(name)) throw new Error(`unknown scope "${name}" (known: ${ALL_SCOPES.join(', ')})`);
    if (kind === 'organization' && ACCOUNT_SCOPES.includes(name)) {
      throw new Error(`scope "${name}" needs an account key (--account)`);
    }
    if (!out.includes(name)) out.push(name);
  }
  if (out.length === 0) throw new Error('a key needs at least one scope');
  return out;
}
