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
  const counts = { created: 4, updated: 0, unchanged: 0, removed: 0, changed: [] };
  logger.info({ file: '/srv/workflows.json', tenants: { ...counts, created: 1 }, workflows: counts }, 'workflows synced: 4 created, 0 updated, 0 unchanged, 0 removed');
  logger.warn('PROT is set but not read; did you mean PORT?');
  const lines = out.trimEnd().split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(/INFO: workflows synced: 4 created, 0 updated, 0 unchanged, 0 removed .*"file":"\/srv\/workflows.json".*"workflows":\{"created":4,"updated":0,"unchanged":0,"removed":0,"changed":\[\]\}/);
  expect(lines[0]).not.toMatch(/"pid"|"hostname"/);
  expect(lines[1]).toMatch(/WARN: PROT is set but not read; did you mean PORT\?$/);
});
