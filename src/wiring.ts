/**
 * Registers every feature's projectors, workers, routes and start-up hooks.
 * Imported once by the entry points (server, CLI, tests) before anything starts.
 */
import './commands/organization/holders.ts';
import './commands/customer/holders.ts';
