/** Structured JSON logs (pino). Secrets never go in: API keys are logged by id only. */
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/** JSON lines on stdout (or `destination`, for tests). The start banner goes to stderr (src/main.ts), never here. */
export function createLogger(level = 'info', destination?: DestinationStream, hooks?: LoggerOptions['hooks']): Logger {
  return pino({
    ...(hooks ? { hooks } : {}), // pino reads hooks.logMethod: an explicit undefined would break it
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['req.headers.authorization', 'authorization', 'secret', '*.secret'], censor: '[redacted]' },
  }, destination);
}

/** A logger that drops everything (tests, CLI in --json mode). */
export const silentLogger: Logger = pino({ level: 'silent' });
