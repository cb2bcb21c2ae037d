import { Writable } from 'node:stream';
import pino from 'pino';
import pinoPretty from 'pino-pretty';
import { expect, it } from 'vitest';
import { PRETTY_OPTIONS } from '../src/log.js';

/**
 * In a terminal the bot's lines go through pino-pretty with PRETTY_OPTIONS.
 * Its default spread a line's fields over many lines (`workflows synced`
 * took 14), so an operator watching `npm start` could not tell one event
 * from the next: one event is one line.
 */
it('a pretty line is one line per event, its fields on it', async () => {
  let out = '';
  const sink = new Writable({ write: (chunk, _enc, done) => ((out += chunk.toString()), done()) });
  const logger = pino({ level: 'info' }, pinoPretty({ ...PRETTY_OPTIONS, colorize: false, destination: sink, sync: true }));
  logger.info({ file: '/srv/workflows.json', tenants: { upserted: 1, disabled: 0 }, workflows: { created: 4, updated: 0, disabled: 0 } }, 'workflows synced');
  logger.warn('PROT is set but not read; did you mean PORT?');
  const lines = out.trimEnd().split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(/INFO: workflows synced .*"file":"\/srv\/workflows.json".*"workflows":\{"created":4,"updated":0,"disabled":0\}/);
  expect(lines[0]).not.toMatch(/"pid"|"hostname"/);
  expect(lines[1]).toMatch(/WARN: PROT is set but not read; did you mean PORT\?$/);
});
