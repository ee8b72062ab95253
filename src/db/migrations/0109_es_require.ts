/**
 * es_require(ok, what): raises SQLSTATE ES010 with `what` as its message
 * unless `ok` is true (a NULL refuses too). The statement of an append's
 * condition calls it (src/eventstore/types.ts, AppendCondition): its error
 * rolls back the append's whole transaction, and the store tells it apart
 * from every other error by its code. The first use is a request that ran
 * on what the process remembered of its key and customer, checked in the
 * append's own transaction (docs/api-pipeline.md "Writes on a remembered
 * key").
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function es_require(p_ok boolean, p_what text) returns boolean
    language plpgsql as $$
    begin
      if p_ok is not true then
        raise exception using errcode = 'ES010', message = p_what;
      end if;
      return true;
    end;
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function es_require(boolean, text)`.execute(db);
}
