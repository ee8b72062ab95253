/**
 * invoicing_uuid_v7(): a UUID version 7 (RFC 9562: 48-bit Unix milliseconds,
 * then random bits) minted inside PostgreSQL, for rows created by a statement
 * rather than by the service's code: the webhook subscriber's deliveries
 * (src/workers/webhooks/subscriber.ts). Every id the service mints is a v7
 * (docs/api-decisions.md), time-ordered like the rest; PostgreSQL 18 has
 * uuidv7() built in, the embedded 17 does not.
 *
 * gen_random_uuid() gives 122 random bits in the v4 layout; its first 6
 * bytes are replaced by the timestamp and the version nibble turned from
 * 0100 into 0111 by setting its two low bits (bits 52 and 53 in
 * PostgreSQL's bytea bit order). The variant bits stay those of v4 (10).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function invoicing_uuid_v7() returns uuid language sql volatile parallel safe as $$
      select encode(
        set_bit(set_bit(
          overlay(uuid_send(gen_random_uuid())
                  placing substring(int8send(floor(extract(epoch from clock_timestamp()) * 1000)::bigint) from 3)
                  from 1 for 6),
          52, 1), 53, 1),
        'hex')::uuid
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists invoicing_uuid_v7()`.execute(db);
}
