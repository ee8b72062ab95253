/**
 * Entry point of `npm start`: `node --import tsx src/main.ts [--role api|projector|webhooks|scheduler]`.
 * Without --role the process runs every role.
 */
import { parseArgs } from 'node:util';
import { ALL_ROLES, ConfigError, loadConfig, type Role } from './config.ts';
import './wiring.ts';
import { stopWithParent, surviveConnectionErrors } from './process-guards.ts';
import { startServer } from './server.ts';
import { createLogger } from './shared/logger.ts';

function rolesFromArgs(): Role[] {
  const { values } = parseArgs({ options: { role: { type: 'string', multiple: true } }, allowPositionals: false });
  if (!values.role?.length) return ALL_ROLES;
  const roles = values.role.flatMap((r) => r.split(','));
  for (const r of roles) {
    if (!ALL_ROLES.includes(r as Role)) throw new ConfigError('--role', `"${r}" is not one of ${ALL_ROLES.join(', ')}`);
  }
  return roles as Role[];
}

async function main(): Promise<void> {
  let roles: Role[];
  let config;
  try {
    roles = rolesFromArgs();
    config = loadConfig();
  } catch (err) {
    console.error(`error: ${(err as Error).message}`);
    process.exit(1);
  }
  const logger = createLogger(config.logLevel);
  surviveConnectionErrors(logger);
  let server;
  try {
    server = await startServer(config, logger, roles);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`error: ${err.message}`);
    } else {
      logger.fatal({ err }, 'start-up failed');
      console.error(`error: start-up failed: ${(err as Error).message}`);
    }
    process.exit(1);
  }
  logger.info({ roles, url: server.url, event_store: server.runtime.store.kind, mode: config.serviceMode }, 'started');
  const embedded = server.runtime.database.embedded;
  if (embedded) console.log(embedded.describe());
  if (server.url) console.log(`Invoicing API listening on ${server.url}`);

  let signals = 0;
  const shutdown = (signal: string) => {
    if (++signals > 1) process.exit(1); // second signal: stop now
    logger.info({ signal }, 'shutting down');
    server
      .stop()
      .then(() => {
        logger.info('stopped');
        process.exit(0);
      })
      .catch((err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  stopWithParent(() => shutdown('parent exited'));
}

void main();
