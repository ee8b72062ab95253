/**
 * Deep equality of JSON values, blind to object key order. Deciders use it to
 * tell which fields a command really changes: a state folded from events read
 * back from PostgreSQL jsonb has its object keys reordered, and that must not
 * make an unchanged address or line look changed (a spurious event, version
 * bump and webhook).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
