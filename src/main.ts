/**
 * The composition root: what makes up the process, in one screen, and the
 * entry point of `npm start` (`node --import tsx src/main.ts [--role
 * api|projector|webhooks|scheduler]`; without --role it runs every role).
 *
 * A new feature adds its router, worker or holder check here, one line each
 * (a projector: one line in src/read-models.ts, the list the admin CLI
 * shares); the tests import `processParts` too. Nothing registers itself by
 * being imported.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { customerRoutes } from './api/customers.ts';
import { documentRoutes } from './api/documents.ts';
import { invoiceRoutes } from './api/invoices.ts';
import { organizationRoutes } from './api/organization.ts';
import { organizationsRoutes } from './api/organizations.ts';
import { scheduleRoutes } from './api/schedules.ts';
import { customerHolderChecks } from './commands/customer/holders.ts';
import { organizationHolderChecks } from './commands/organization/holders.ts';
import { scheduleHolderChecks } from './commands/schedule/holders.ts';
import { ALL_ROLES, ConfigError, loadConfig, type Role } from './config.ts';
import { dashboardRouter } from './dashboard/router.ts';
import { demoStartupHook } from './demo/bootstrap.ts';
import { OutageLog } from './db/outage-log.ts';
import { readModelProjectors } from './read-models.ts';
import { stopWithParent, surviveConnectionErrors } from './process-guards.ts';
import { startServer, type ProcessParts } from './server.ts';
import { createLogger } from './shared/logger.ts';
import { auditDigestWorker } from './workers/audit-digest.ts';
import { finalizationRecoveryWorker } from './workers/finalization-recovery.ts';
import { reservationRecoveryWorker } from './workers/reservation-recovery.ts';
import { scheduleReactionsWorker } from './workers/schedule-reactions.ts';
import { schedulerWorker } from './workers/scheduler.ts';
import { webhookSenderWorker, webhookSubscriberWorker } from './workers/webhooks/index.ts';

export const processParts: ProcessParts = {
  // Role api: one router per resource (src/api/<resource>.ts).
  routes: [
    ...customerRoutes,
    ...invoiceRoutes,
    ...documentRoutes,
    ...organizationRoutes,
    ...organizationsRoutes,
    ...scheduleRoutes,
  ],
  // Role api: web apps beside the API.
  mounts: [{ path: '/dashboard', router: dashboardRouter }],
  // Role projector: one projector per read model (listed in src/read-models.ts, which the CLI shares).
  projectors: readModelProjectors,
  // Background workers (src/workers/), each started by its own role.
  workers: [
    reservationRecoveryWorker({ ...customerHolderChecks, ...organizationHolderChecks, ...scheduleHolderChecks }),
    finalizationRecoveryWorker,
    webhookSubscriberWorker,
    webhookSenderWorker,
    schedulerWorker(),
    scheduleReactionsWorker(),
    auditDigestWorker,
  ],
  // Run once the database is open, before the roles start.
  hooks: [demoStartupHook],
};

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
  // One error line per database outage, one when it ends (src/db/outage-log.ts).
  const outages = new OutageLog();
  const logger = createLogger(config.logLevel, undefined, { logMethod: outages.hook });
  outages.attach(logger);
  surviveConnectionErrors(logger);
  let server;
  try {
    server = await startServer(config, logger, roles, processParts);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`error: ${err.message}`);
    } else {
      logger.fatal({ err }, 'start-up failed');
      console.error(`error: start-up failed: ${(err as Error).message}`);
    }
    process.exit(1);
  }
  const pool = server.runtime.database.pool;
  outages.watch(() => pool.query('select 1'));
  logger.info({ roles, url: server.url, event_store: server.runtime.store.kind, mode: config.serviceMode }, 'started');
  // The banner is for the person at the terminal: stderr, never mixed into the JSON log on stdout.
  const embedded = server.runtime.database.embedded;
  if (embedded) console.error(embedded.describe());
  if (server.url) console.error(`Invoicing API listening on ${server.url}`);
  if (server.metricsUrl) console.error(`Metrics on ${server.metricsUrl}`);

  let stopping: number | null = null;
  const shutdown = (signal: string) => {
    if (stopping !== null) {
      // A second Ctrl-C from someone tired of waiting: stop now. Not the echoes of the first: a signal sent to the
      // whole process group (Ctrl-C at a terminal, systemd, `kill -- -pgid`) reaches this process, and npm forwards
      // it again and exits, all within moments; exiting on those would leave the embedded PostgreSQL running.
      if (signal !== 'parent exited' && Date.now() - stopping > 1000) process.exit(1);
      return;
    }
    stopping = Date.now();
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
  stopWithParent(config.startedByNpm, () => shutdown('parent exited'));
}

/** Run only as the entry point: the CLI and the tests import processParts without starting a server. */
function isEntryPoint(): boolean {
  if (!process.argv[1]) return false;
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) void main();
