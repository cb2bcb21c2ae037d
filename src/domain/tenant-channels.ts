/**
 * A Slack channel belongs to one tenant, or is the platform channel (which
 * sees every tenant): Slack listeners scope a command or click by the
 * channel it came from (src/slack/listeners/tenancy.ts), so a channel held
 * twice would make that scope ambiguous. The partial unique index
 * `tenants_channel` (enabled tenants) is the last word; this is the rule
 * both ways of declaring a tenant check first, to refuse with words instead
 * of a constraint violation.
 */

/** An enabled tenant already holding the channel asked for. */
export interface ChannelHolder {
  id: string;
  source: 'file' | 'api';
}

/**
 * Why a tenant may not have `channel`, or undefined when it may. The holder
 * is the enabled tenant (another one) holding the channel now, if any.
 */
export function channelRefusal(channel: string, context: { platformChannel?: string; holder?: ChannelHolder }): string | undefined {
  if (context.platformChannel && channel === context.platformChannel) {
    return 'is the PLATFORM_CHANNEL, which sees every tenant; a tenant needs a channel of its own';
  }
  const { holder } = context;
  if (!holder) return undefined;
  const managed = holder.source === 'api' ? ', managed over the API (PUT /api/v1/tenants)' : '';
  return `already belongs to tenant "${holder.id}"${managed}; give one of them another channel`;
}

/**
 * Where a `/scheduler` answer that changed state for everyone (a pause,
 * resume, run or maintenance window no thread tells) is said: in the channel
 * of the workflow's tenant, where its alerts go, so the people there hear of
 * it. Typed there, it is said there; typed elsewhere (the platform channel),
 * it is posted in the tenant's channel and the typer is answered privately,
 * naming it. A tenant with no channel, or a workflow in shadow (told only to
 * the audit destination, the platform channel), is answered where typed.
 */
export function publicAnswerPlace(at: { typedIn: string; tenantChannel: string | null; shadow: boolean }): { kind: 'here' } | { kind: 'tenant_channel'; channel: string } {
  if (!at.tenantChannel || at.shadow || at.tenantChannel === at.typedIn) return { kind: 'here' };
  return { kind: 'tenant_channel', channel: at.tenantChannel };
}
