/**
 * Child process of `npm run bench -- api`: the real API (role api only, so
 * projectors do not compete for the CPU) plus one bench-only route that does
 * exactly the baseline's indexed read behind the full pipeline. Reports its
 * URL to the parent over IPC.
 */
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import type { RouteSpec } from '../../src/api/route.ts';
import { processParts } from '../../src/main.ts';
import { startServer } from '../../src/server.ts';
import { createLogger } from '../../src/shared/logger.ts';

const benchRoute: RouteSpec = {
  method: 'get',
  path: '/_bench/organization',
  summary: 'Bench: one indexed read behind the whole pipeline',
  tag: 'Bench',
  scope: 'organization:read',
  audience: 'organization',
  async handler(ctx) {
    const { rows } = await sql`select * from organizations where id = ${ctx.organizationId}`.execute(ctx.rt.database.db);
    return { data: rows[0] };
  },
};

const config = loadConfig();
const server = await startServer(config, createLogger(config.logLevel), ['api'], { ...processParts, routes: [...processParts.routes, benchRoute] });
process.send!({ url: server.url });
process.on('SIGTERM', () => void server.stop().then(() => process.exit(0)));
