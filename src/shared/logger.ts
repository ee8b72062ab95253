/** Structured JSON logs (pino). Secrets never go in: API keys are logged by id only. */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level = 'info'): Logger {
  return pino({
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['req.headers.authorization', 'authorization', 'secret', '*.secret'], censor: '[redacted]' },
  });
}

/** A logger that drops everything (tests, CLI in --json mode). */
export const silentLogger: Logger = pino({ level: 'silent' });
