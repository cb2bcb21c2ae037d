import { z } from 'zod';
import { RESOLVE_FIELD } from '../blocks/ids.js';

/** The parts of Slack's payloads the listeners rely on, validated before use. */

export const alertActionBody = z.object({
  user: z.object({ id: z.string().min(1) }),
  channel: z.object({ id: z.string().min(1) }).optional(),
  trigger_id: z.string().optional(),
  /** The message clicked (absent for clicks in the App Home). */
  container: z.object({ message_ts: z.string().optional() }).optional(),
  actions: z
    .array(
      z.object({
        action_id: z.string(),
        value: z.string().optional(),
        selected_option: z.object({ value: z.string() }).optional(),
      }),
    )
    .min(1),
});

const alertId = z.coerce.number().int().positive();

export type ParsedAlertAction = { alertId: number; user: string; channel: string | undefined; triggerId: string | undefined; choice: string | undefined; messageTs: string | undefined };

/** Button values are `<alertId>`; select options are `<alertId>:<choice>`. */
export function parseAlertAction(body: unknown): { ok: true; value: ParsedAlertAction } | { ok: false; error: string } {
  const parsed = alertActionBody.safeParse(body);
  if (!parsed.success) return { ok: false, error: `unexpected action payload: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}` };
  const action = parsed.data.actions[0]!;
  const raw = action.selected_option?.value ?? action.value ?? '';
  const [idText, choice] = raw.split(':');
  const id = alertId.safeParse(idText);
  if (!id.success) return { ok: false, error: `action value ${JSON.stringify(raw)} does not name an alert` };
  return { ok: true, value: { alertId: id.data, user: parsed.data.user.id, channel: parsed.data.channel?.id, triggerId: parsed.data.trigger_id, choice, messageTs: parsed.data.container?.message_ts } };
}

export const reassignSubmission = z.object({
  user: z.object({ id: z.string().min(1) }),
  view: z.object({
    private_metadata: z.string().transform((s, ctx) => {
      try {
        // The modal is only opened from a click in a channel; a missing channel must not
        // fall back to the platform's everything-scope. messageTs: the root clicked (absent in a
        // form opened before it was recorded), updated at once on success.
        return z.object({ alertId: alertId, channel: z.string().min(1), messageTs: z.string().min(1).nullable().default(null) }).parse(JSON.parse(s));
      } catch {
        ctx.addIssue({ code: 'custom', message: 'private_metadata is not what the modal was opened with' });
        return z.NEVER;
      }
    }),
    state: z.object({
      values: z.object({
        team: z.object({ team: z.object({ selected_option: z.object({ value: z.enum(['engineering', 'customer']) }).nullable().optional() }) }),
        user: z.object({ user: z.object({ selected_user: z.string().nullable().optional() }) }),
        note: z.object({ note: z.object({ value: z.string().nullable().optional() }) }),
      }),
    }),
  }),
});

export const resolveSubmission = z.object({
  user: z.object({ id: z.string().min(1) }),
  view: z.object({
    private_metadata: z.string().transform((s, ctx) => {
      try {
        // As for reassign: no channel, no scope; messageTs is the root clicked, updated at once on success.
        return z.object({ alertId: alertId, channel: z.string().min(1), messageTs: z.string().min(1).nullable() }).parse(JSON.parse(s));
      } catch {
        ctx.addIssue({ code: 'custom', message: 'private_metadata is not what the modal was opened with' });
        return z.NEVER;
      }
    }),
    state: z.object({
      values: z.object({
        [RESOLVE_FIELD.note.block]: z.object({ [RESOLVE_FIELD.note.action]: z.object({ value: z.string().nullable().optional() }) }),
      }),
    }),
  }),
});

export const commandBody = z.object({
  text: z.string().default(''),
  user_id: z.string().min(1),
  channel_id: z.string().min(1),
  command: z.string(),
});
