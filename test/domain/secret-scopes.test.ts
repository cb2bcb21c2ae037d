import { describe, expect, it } from 'vitest';
import { launchSigningKey } from '../../src/domain/launch-signing.js';
import { createRedactor, REDACTED, secretScope } from '../../src/domain/redact.js';

describe('whose a secret is, and which key signs a launch', () => {
  it.each([
    [{ operatorSet: true }, 'acme', undefined],
    [{ operatorSet: false }, 'acme', 'acme'],
    [{}, 'globex', 'globex'],
    [null, 'acme', 'acme'],
  ])('a launcher %j of tenant %s is scoped to %s', (launcher, tenant, scope) => {
    expect(secretScope(launcher, tenant)).toBe(scope);
  });

  it.each([
    [{ secret: 'own-secret-0123456789', operatorSet: false }, 'operator-secret-0123', { ok: true, secret: 'own-secret-0123456789' }],
    [{ secret: 'own-secret-0123456789', operatorSet: true }, 'operator-secret-0123', { ok: true, secret: 'own-secret-0123456789' }],
    [{ operatorSet: true }, 'operator-secret-0123', { ok: true, secret: 'operator-secret-0123' }],
    [{ operatorSet: false }, 'operator-secret-0123', { ok: false }],
    [{ operatorSet: true }, undefined, { ok: false }],
  ])('launcher %j with LAUNCHER_SECRET %s signs with %j', (launcher, operatorSecret, expected) => {
    expect(launchSigningKey(launcher, operatorSecret)).toMatchObject(expected);
  });

  it('values under 8 characters are never redacted; longer ones whole, the longest first', () => {
    const redact = createRedactor(['database', 'db', 'database-password-01']);
    expect(redact('db database database-password-01')).toBe(`db ${REDACTED} ${REDACTED}`);
  });
});
