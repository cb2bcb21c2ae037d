import { describe, expect, it } from 'vitest';
import { CandidatePolicyError, checkCandidatePolicy, readCandidatePolicy } from '../../src/replay/candidate-policy.js';

describe('a candidate policy that cannot be used', () => {
  it('is named as the --policy file, not as a scenario, with every problem by path', async () => {
    expect(() => checkCandidatePolicy({ alertAfter: 0 }, 'c.json')).toThrow(/^--policy c\.json is not a valid candidate policy:\n {2}c\.json.*alertAfter/);
    await expect(readCandidatePolicy('no/such/candidate.json')).rejects.toThrow(CandidatePolicyError);
    await expect(readCandidatePolicy('no/such/candidate.json')).rejects.toThrow(/^--policy no\/such\/candidate\.json is not a valid candidate policy:\n {2}no\/such\/candidate\.json: cannot read/);
  });
});
