/**
 * A projector's statements built once and run with each batch's values:
 * `compiledOnce` compiles a Kysely `sql` template a single time (its text
 * does not depend on the batch when the values go in as arrays), and
 * `preparedStatement` turns a compiled statement into an InlineStatement:
 * the text, which the store prepares once per connection, and its values as
 * SQL literals, the form pg itself sends them in (arrays as PostgreSQL array
 * text), so `$n::uuid[]` in the text reads them as before.
 */
import { CompiledQuery, DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type RawBuilder } from 'kysely';
import utils from 'pg/lib/utils.js';
import type { Database } from '../db/schema.ts';
import type { InlineStatement } from '../eventstore/postgres.ts';

/** Compiles only: it has no connection (Kysely's documented way to build SQL without running it). */
const compiler = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/** Marks the value a template read from its `values` argument at compile time: `{ [NAMED]: key }`. */
const NAMED = Symbol('named value');

/**
 * A `sql` template of named values, compiled the first time it is used, then
 * only filled: building and compiling a statement of fifty values at every
 * write cost more Node time than the rest of the projection (docs/performance.md
 * "Writes: group commit, fewer statements, less Node per write"). The template must put each value
 * it reads from `values` into the SQL as it is: what it computed from one
 * would be frozen at the first call. Compiling throws for the usual slips (a
 * method called on a value, a value turned into text, as `sql.raw(v.x)` or
 * a concatenation would); a property read (`v.ids.length`) is not caught,
 * which the tests of each statement are for. Values it does not read from
 * `values` are constants of the text.
 */
export function compiledOnce<V extends object, R>(template: (values: V) => RawBuilder<R>): (values: V) => CompiledQuery<R> {
  let compiled: { sql: string; fill: ((values: V) => unknown)[] } | null = null;
  return (values) => {
    if (compiled === null) {
      const named = new Proxy({} as V, {
        get: (_target, key) => {
          if (typeof key !== 'string') throw new TypeError('compiledOnce: values are read by name');
          const refuse = () => {
            throw new TypeError(`compiledOnce: the template computed with the value "${key}" (it must put it into the SQL as it is)`);
          };
          return Object.freeze({ [NAMED]: key, [Symbol.toPrimitive]: refuse, toString: refuse, valueOf: refuse });
        },
      });
      const { sql, parameters } = template(named).compile(compiler);
      compiled = {
        sql,
        fill: parameters.map((p) => {
          if (p !== null && typeof p === 'object' && NAMED in p) {
            const key = (p as { [NAMED]: string })[NAMED];
            return (v: V) => (v as Record<string, unknown>)[key];
          }
          return () => p;
        }),
      };
    }
    const { sql, fill } = compiled;
    return CompiledQuery.raw(sql, fill.map((value) => value(values))) as CompiledQuery<R>;
  };
}

export function preparedStatement(query: CompiledQuery<unknown>, literal: (value: string) => string): InlineStatement {
  return {
    sql: query.sql,
    args: query.parameters.map((value) => {
      const prepared = utils.prepareValue(value) as string | null | Buffer;
      if (prepared === null) return 'NULL';
      if (typeof prepared !== 'string') throw new TypeError('an inline statement takes no binary value');
      return literal(prepared);
    }),
  };
}
