/**
 * A signed request whose text cannot be taken (a NUL, a lone surrogate, a
 * command longer than Slack's own limit) is refused, but a person typed it:
 * a 4xx shows them only Slack's bare "failed with the error", so where Slack
 * has a way to show words, the refusal is said in them. A slash command is
 * answered in an ephemeral reply, a form under the field at fault. Nothing
 * is done either way. Undefined: no such way; the 400 stands.
 */
export function refusedInWords(raw: string, contentType: string | undefined, problem: string): Record<string, unknown> | undefined {
  if (!contentType?.startsWith('application/x-www-form-urlencoded')) return undefined;
  const form = new URLSearchParams(raw);
  const payload = form.get('payload');
  if (payload === null) {
    const field = /^(?:body\.)?text: (.*)$/.exec(problem);
    if (!form.has('command') || !field) return undefined;
    const text = form.get('text') ?? '';
    const why = text.length > COMMAND_TEXT_MAX ? `it is ${text.length.toLocaleString('en-US')} characters long, and at most ${COMMAND_TEXT_MAX.toLocaleString('en-US')} are read` : field[1]!;
    return { response_type: 'ephemeral', text: `I couldn't take that command: ${why}. Nothing was done.` };
  }
  const field = /^payload\.view\.state\.values\.([^.]+)\.[^:]+: (.*)$/.exec(problem);
  if (!field || !/"type"\s*:\s*"view_submission"/.test(payload)) return undefined;
  return { response_action: 'errors', errors: { [field[1]!]: `This can't be saved: ${field[2]}.` } };
}

/** The longest `/scheduler` text read (Slack's own message limit is far above any command). */
export const COMMAND_TEXT_MAX = 4000;
