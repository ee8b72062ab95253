/**
 * Registers every feature's projectors, workers, routes and start-up hooks.
 * Imported once by the entry points (server, CLI, tests) before anything starts.
 */
import './commands/customer/holders.ts';
import './commands/organization/holders.ts';
import './commands/schedule/holders.ts';
import { demoStartupHook } from './demo/bootstrap.ts';
import { useScheduleCounter } from './queries/organizations.ts';
import { countQuotaSchedules } from './queries/schedules.ts';
import { startupHooks } from './server.ts';

startupHooks.push(demoStartupHook);
useScheduleCounter(countQuotaSchedules);
