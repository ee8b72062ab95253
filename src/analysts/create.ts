/**
 * `analyst create`: a PostgreSQL login for one organization's analyst
 * (docs/read-models.md "Analyst logins"), member of the group role of
 * migration 0062. The password is random (32 bytes) and is sent to the server
 * only as a SCRAM-SHA-256 verifier (RFC 5802/7677, the format PostgreSQL
 * stores), so it never appears in a statement a server log could keep; it is
 * shown once, in the connection string.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { ANALYST_GROUP } from '../db/migrations/0062_analyst_access.ts';
import type { Database } from '../db/schema.ts';

const SCRAM_ITERATIONS = 4096;

/** PostgreSQL's stored form of a SCRAM-SHA-256 password. */
export function scramVerifier(password: string, salt = randomBytes(16), iterations = SCRAM_ITERATIONS): string {
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

export interface AnalystLogin {
  organization_id: string;
  role: string;
  connection_string: string;
}

/** `databaseUrl`: the server's own connection string (its host, port and database are the analyst's). */
export async function createAnalystLogin(db: Kysely<Database>, databaseUrl: string, organizationId: string): Promise<AnalystLogin> {
  const role = `analyst_${organizationId.replace(/-/g, '').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  const password = randomBytes(32).toString('base64url');
  // Identifiers and the verifier are generated here (hex, base64): nothing from the operator is interpolated.
  await sql`create role ${sql.id(role)} login password ${sql.lit(scramVerifier(password))} in role ${sql.id(ANALYST_GROUP)}
            connection limit 10`.execute(db);
  await sql`alter role ${sql.id(role)} set default_transaction_read_only = on`.execute(db);
  await sql`alter role ${sql.id(role)} set statement_timeout = '5min'`.execute(db);
  const url = new URL(databaseUrl);
  url.username = role;
  url.password = password;
  url.search = '';
  return { organization_id: organizationId, role, connection_string: url.toString().replace(/^postgres:/, 'postgresql:') };
}
