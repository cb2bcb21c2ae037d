import pino, { type Logger } from 'pino';
import { redactLogLine } from './secrets.js';

export type { Logger };

/** pino-pretty's options in a terminal (exported for its test). */
export const PRETTY_OPTIONS = { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true };

/**
 * JSON lines in production; pretty when a person is watching a terminal.
 * `destination` (tests) receives the same redacted lines instead of stdout.
 */
export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', destination?: pino.DestinationStream): Logger {
  const pretty = !destination && process.stdout.isTTY && !process.env.CI;
  const options: pino.LoggerOptions = {
    level,
    redact: {
      paths: ['token', '*.token', 'apiToken', '*.apiToken', 'pingKey', '*.pingKey', 'authorization', '*.authorization', 'headers.authorization', 'req.headers.authorization'],
      censor: '[redacted]',
    },
    // Values, wherever they sit in a line (an error message quoting a run's output), as written or JSON-escaped: see src/secrets.ts.
    hooks: { streamWrite: redactLogLine },
    ...(pretty ? { transport: { target: 'pino-pretty', options: PRETTY_OPTIONS } } : {}),
  };
  return destination ? pino(options, destination) : pino(options);
}

/** For tests and tools that must stay quiet unless LOG_LEVEL says otherwise. */
export const silentLogger: Logger = pino({ level: 'silent' });
