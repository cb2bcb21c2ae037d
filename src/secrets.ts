import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** API tokens and ping keys are high-entropy, so a plain SHA-256 is a sound stored form. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function newToken(prefix = 'sbt_'): string {
  return `${prefix}${randomBytes(24).toString('base64url')}`;
}

export function newPingKey(): string {
  return randomBytes(16).toString('base64url');
}

/** Constant-time comparison of two hex digests (or any two strings). */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
