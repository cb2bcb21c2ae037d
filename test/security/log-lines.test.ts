import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { rememberSecrets } from '../../src/secrets.js';

/**
 * Log lines are JSON: a secret holding a quote, a backslash or a line break is
 * written escaped (`\"`, `\\`, `\n`), a form the value search of the raw value
 * does not find. Every form a line can hold it in is redacted.
 */

function capture() {
  const lines: string[] = [];
  return { lines, logger: createLogger('info', { write: (line: string) => void lines.push(line) }) };
}

describe('log lines', () => {
  it('a secret with a quote, a backslash, a line break or a tab is redacted as JSON writes it', () => {
    const secrets = ['smtp"pass\\word-0123', 'multi-line-secret\nsecond-line-4567', 'tabbed\tsecret-value-89', 'plain-secret-value-abcdef'];
    rememberSecrets(secrets);
    const { lines, logger } = capture();
    logger.info({ detail: `before ${secrets.join(' and ')} after` }, `message ${secrets[0]} with ${secrets[1]}`);
    logger.warn({ err: new Error(`failed with ${secrets[2]}`) }, 'an error');
    const text = lines.join('');
    for (const secret of secrets) {
      expect(text).not.toContain(JSON.stringify(secret).slice(1, -1));
      expect(text).not.toContain(secret);
    }
    // Still valid JSON with the marker in place.
    const first = JSON.parse(lines[0]!) as { msg: string; detail: string };
    expect(first.msg).toBe('message [redacted] with [redacted]');
    expect(first.detail).toBe('before [redacted] and [redacted] and [redacted] and [redacted] after');
  });
});
