import { createHash, createHmac } from 'node:crypto';
import { z } from 'zod';
import { NOTIFIED_EVENT_KINDS } from '../domain/events.js';
import { headerProblem, type HeaderUse } from '../domain/webhook-headers.js';
import { alsoBesideShapeProblems } from './issue-lines.js';
import { envVarName, exactlyOne, pagerDutyRoutingKey, webhookSecret } from './secret-refs.js';

export const DESTINATION_KINDS = ['slack', 'email', 'webhook', 'pagerduty'] as const;

const routingFields = {
  /** Which events to deliver after the opening; the opening and `resolved` always go (a thread needs its start and end). */
  events: z.array(z.enum(NOTIFIED_EVENT_KINDS)).min(1).optional(),
  /** Lowest alert severity this destination hears about (pagerduty defaults to critical, the rest to warning). */
  minSeverity: z.enum(['warning', 'critical']).optional(),
};

/** A Slack channel's id: operators often write its name (`#data-alerts`), which the Web API does not take. */
export const slackChannelId = z
  .string()
  .regex(/^[CG][A-Z0-9]{2,}$/, "a Slack channel id such as C0123ABCD; a channel name is not one (in Slack, the channel's details show its id at the bottom)");

const slackDestination = z
  .object({
    kind: z.literal('slack'),
    channel: slackChannelId,
    ...routingFields,
  })
  .strict();

const emailDestination = z
  .object({
    kind: z.literal('email'),
    to: z.array(z.email('an email address such as ops@example.com')).min(1).max(50),
    ...routingFields,
  })
  .strict();

/**
 * A PagerDuty key kept only to close what was opened under it (a key being rotated out): it pages nothing
 * new, and the incidents it was paged for still get their acknowledge, updates and resolve
 * (src/ledger/destinations.ts shouldRoute). Remove it once they are closed.
 */
const pagerDutyRetired = z.literal(true).optional();

const webhookFields = {
  kind: z.literal('webhook'),
  url: z.url({ protocol: /^https?$/, error: 'an http(s) URL' }),
  headers: z.record(z.string(), z.string()).optional(),
  ...routingFields,
};

/**
 * Headers as written for a webhook or an http launcher (the file, the API,
 * PLATFORM_DESTINATIONS): none the bot
 * sets itself, in any case, and none Node cannot send (a bad name, a CR/LF in
 * a value) (src/domain/webhook-headers.ts). Stored rows are
 * read with the plain record and such a header is dropped when sending.
 */
export function configuredHeaders(use: HeaderUse) {
  return z.record(z.string(), z.string()).superRefine((headers, ctx) => {
    for (const [name, value] of Object.entries(headers)) {
      const reason = headerProblem(name, value, use);
      if (reason) ctx.addIssue({ code: 'custom', path: [name], message: reason });
    }
  });
}

const webhookInputHeaders = configuredHeaders('webhook').optional();

const kindError = { error: (issue: { code: string }) => (issue.code === 'invalid_union' ? `kind must be one of ${DESTINATION_KINDS.map((k) => `"${k}"`).join(', ')}` : undefined) };

/**
 * Where an alert's events go besides the tenant's own channel and the
 * platform channel, as written in the workflows file, the tenants API and
 * PLATFORM_DESTINATIONS: secrets inline or by environment variable. One shape
 * per kind; the engine routes by `events` and `minSeverity`, the sender
 * delivers by `kind`.
 */
export const destinationSchema = z.discriminatedUnion(
  'kind',
  [
    slackDestination,
    emailDestination,
    z
      .object({
        ...webhookFields,
        headers: webhookInputHeaders,
        /** HMAC-SHA256 key for the X-Scheduler-Signature header; share it with the receiver. */
        secret: webhookSecret.optional(),
        /** Name of an environment variable holding `secret`. */
        secretEnv: envVarName.optional(),
      })
      .strict()
      .superRefine(exactlyOne('secret', 'secretEnv'), alsoBesideShapeProblems),
    z
      .object({
        kind: z.literal('pagerduty'),
        /** The Events API v2 integration key of a PagerDuty service. */
        routingKey: pagerDutyRoutingKey.optional(),
        /** Name of an environment variable holding `routingKey`. */
        routingKeyEnv: envVarName.optional(),
        retired: pagerDutyRetired,
        ...routingFields,
      })
      .strict()
      .superRefine(exactlyOne('routingKey', 'routingKeyEnv'), alsoBesideShapeProblems),
  ],
  kindError,
);

/**
 * A destination with its secrets resolved (src/config/secret-refs.ts): the
 * form stored in `tenants.destinations` and held in PLATFORM_DESTINATIONS,
 * the only one the engine and the transports see.
 */
export const resolvedDestinationSchema = z.discriminatedUnion(
  'kind',
  [
    slackDestination,
    emailDestination,
    z.object({ ...webhookFields, secret: webhookSecret }).strict(),
    z.object({ kind: z.literal('pagerduty'), routingKey: pagerDutyRoutingKey, retired: pagerDutyRetired, ...routingFields }).strict(),
  ],
  kindError,
);

export const destinationListSchema = z
  .array(destinationSchema)
  .max(20)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    // Run beside the entries' own shape problems (the `when` below), so a duplicate is named with them, not
    // after they are fixed: an entry that does not parse is the shape check's, and is left out here.
    (list as unknown[]).forEach((entry, i) => {
      const parsed = destinationSchema.safeParse(entry);
      if (!parsed.success) return;
      const d = parsed.data;
      // Before resolution a routing key may be only a variable's name: list it under that name.
      // Webhooks are told apart by URL here (the id's digest needs the database's key; the message shows the host only).
      const id =
        d.kind === 'pagerduty' && d.routingKey === undefined
          ? `pagerduty:$${d.routingKeyEnv}`
          : d.kind === 'webhook'
            ? `webhook:${d.url}`
            : destinationId(d as DestinationSpec, undefined);
      const shown = d.kind === 'webhook' ? `webhook:${hostOf(d.url)}` : id;
      if (seen.has(id)) ctx.addIssue({ code: 'custom', path: [i], message: `duplicate destination "${shown}"` });
      seen.add(id);
    });
  }, { when: (payload: { value: unknown }) => Array.isArray(payload.value) });

/**
 * The destination's identity in the outbox (`notifications.destination`, and
 * so in every idempotency key): `kind:target`. Secrets never appear in it; a
 * PagerDuty destination is named by a digest of its routing key, the resolved
 * value whichever way it was given, so moving a key from the file into the
 * environment keeps the identity an open incident's rows were written under.
 * A webhook's URL often is a secret (a Slack incoming webhook, a token in the
 * query), so it is named by its host and a keyed digest of the URL
 * (`webhookDestinationId`); `idKey` is the database's destination id key
 * (src/ledger/destination-id-key.ts), needed for webhooks only.
 */
export function destinationId(d: DestinationSpec, idKey: string | undefined): string {
  switch (d.kind) {
    case 'slack':
      return `slack:${d.channel}`;
    case 'email':
      return `email:${[...d.to].map((a) => a.toLowerCase()).sort().join(',')}`;
    case 'webhook':
      return webhookDestinationId(d.url, idKey);
    case 'pagerduty':
      return `pagerduty:${createHash('sha256').update(d.routingKey).digest('hex').slice(0, 12)}`;
  }
}

/**
 * `webhook:<host>/<digest>`: the host (shown anyway, and what pacing goes by)
 * and 16 hex digits of HMAC-SHA256 of the URL. Keyed, because a plain digest
 * of a URL with little entropy in it (`https://hooks.example.com/t/1234`) is
 * found by trying the candidates; the key is random per database, made by
 * migration 0019, and not the webhook's own secret, so rotating that secret
 * keeps the identity an open incident's rows (and its `resolved`) go by.
 */
export function webhookDestinationId(url: string, idKey: string | undefined): string {
  if (!idKey) throw new Error('a webhook destination id needs the destination id key (loadDestinationIdKey, src/ledger/destination-id-key.ts)');
  return `webhook:${hostOf(url)}/${createHmac('sha256', idKey).update(url).digest('hex').slice(0, 16)}`;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid-url';
  }
}

/** A destination as written (secrets inline or by environment variable). */
export type DestinationInput = z.infer<typeof destinationSchema>;
/** A destination with its secrets resolved: what is stored and delivered to. */
export type DestinationSpec = z.infer<typeof resolvedDestinationSchema>;
