import pino, { type Logger } from 'pino';

export type { Logger };

/** JSON lines in production; pretty when a person is watching a terminal. */
export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  const pretty = process.stdout.isTTY && !process.env.CI;
  return pino({
    level,
    redact: {
      paths: ['token', '*.token', 'apiToken', '*.apiToken', 'pingKey', '*.pingKey', 'authorization', '*.authorization', 'headers.authorization', 'req.headers.authorization'],
      censor: '[redacted]',
    },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } } : {}),
  });
}

/** For tests and tools that must stay quiet unless LOG_LEVEL says otherwise. */
export const silentLogger: Logger = pino({ level: 'silent' });
