/**
 * An SQL string literal, exactly as pg's `escapeLiteral` writes it (quotes
 * doubled inside '...'; with a backslash, ` E'...'` with backslashes
 * doubled too), built with two native string replacements instead of pg's
 * loop that concatenates character by character. An inline write's message
 * carries the event's JSON and the read-model row's values as literals
 * (src/eventstore/postgres.ts, appendAtomically), a few kilobytes per
 * write, and pg's loop was the largest single cost of a lone write in Node
 * (docs/performance.md "Writes: group commit, fewer statements, less Node per write").
 */
export function sqlLiteral(value: string): string {
  const quoted = value.replaceAll("'", "''");
  return value.includes('\\') ? ` E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}
