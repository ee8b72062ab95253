/**
 * A projector's Kysely statement as an InlineStatement (projector.ts): the
 * compiled text, which the store prepares once per connection, and its
 * values as SQL literals, the form pg itself sends them in (arrays as
 * PostgreSQL array text), so `$n::uuid[]` in the text reads them as before.
 */
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type RawBuilder } from 'kysely';
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

export function preparedStatement(query: RawBuilder<unknown>, literal: (value: string) => string): InlineStatement {
  const { sql, parameters } = query.compile(compiler);
  return {
    sql,
    args: parameters.map((value) => {
      const prepared = utils.prepareValue(value) as string | null | Buffer;
      if (prepared === null) return 'NULL';
      if (typeof prepared !== 'string') throw new TypeError('an inline statement takes no binary value');
      return literal(prepared);
    }),
  };
}
