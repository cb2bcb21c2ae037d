import { describe, expect, it } from 'vitest';
import { fingerprintError, normaliseError } from '../../src/domain/fingerprint.js';

describe('error fingerprint', () => {
  it('groups errors that differ only in numbers, ids, timestamps, quoted values and paths', () => {
    const a = fingerprintError('2026-03-10T02:03:11Z ERROR run 4711 failed: relation "orders_2026_03" not found in /var/lib/jobs/abc/run.py (request 9f1c2e3a-1b2c-4d5e-8f90-123456789abc, commit 3fa9c81be2)');
    const b = fingerprintError('2026-03-11T02:04:59.123Z ERROR run 4790 failed: relation "orders_2026_04" not found in /var/lib/jobs/xyz/run.py (request 0a1b2c3d-0000-4d5e-8f90-abcdefabcdef, commit 77ab12cd90)');
    expect(a).toMatch(/^[0-9a-f]{12}$/);
    expect(a).toBe(b);
  });

  it('keeps different failures apart', () => {
    expect(fingerprintError('connection reset by peer')).not.toBe(fingerprintError('permission denied for table orders'));
    expect(fingerprintError('timed out')).not.toBe(fingerprintError('worker lost'));
  });

  it('normalises to readable placeholders and ignores empty text', () => {
    expect(normaliseError("value 'abc' at 0xDEADBEEF took 12.5s")).toBe("value '<q>' at <hex> took <n>s");
    expect(fingerprintError('   ')).toBeNull();
    expect(fingerprintError(null)).toBeNull();
  });
});
