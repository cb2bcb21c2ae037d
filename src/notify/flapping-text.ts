/**
 * The words for a flapping alert, shared by the Slack reply and the other
 * destinations. Plain text built only from numbers in the event data, so no
 * escaping is needed in any medium. Read defensively: old rows may lack fields.
 */

/** "Flapping: 4 changes between success and failure in the last 10 runs. It will resolve after 3 successes in a row." */
export function flappingSentence(data: Record<string, unknown>): string {
  const num = (k: string) => (typeof data[k] === 'number' ? (data[k] as number) : undefined);
  const changes = num('transitions');
  const window = num('window');
  const need = num('recoverAfter');
  const seen = changes !== undefined ? `${changes} changes between success and failure${window ? ` in the last ${window} runs` : ''}` : 'it keeps changing between success and failure';
  return `Flapping: ${seen}. It will resolve after ${need ?? 'several'} successes in a row.`;
}

/** " (3 successes in a row)" for a recovery that needed more than one success; empty otherwise. */
export function successesInARow(successes: unknown): string {
  return typeof successes === 'number' && successes > 1 ? ` (${successes} successes in a row)` : '';
}
