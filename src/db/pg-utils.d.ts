/**
 * pg's own conversion of a JavaScript value to the text it sends for a
 * parameter (arrays as PostgreSQL array text, dates, JSON), which
 * @types/pg does not describe. src/projections/inline-statements.ts uses it
 * to write values as literals exactly as pg would send them.
 */
declare module 'pg/lib/utils.js' {
  const utils: { prepareValue(value: unknown): string | Buffer | null };
  export default utils;
}
