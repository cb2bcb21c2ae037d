import { escapeMrkdwn } from './limits.js';

export const USAGE: Record<string, string> = {
  status: '/scheduler status [workflow]',
  run: '/scheduler run <workflow>',
  ack: '/scheduler ack <workflow>',
  release: '/scheduler release <workflow>',
  reassign: '/scheduler reassign <workflow> <@user> [note]',
  silence: '/scheduler silence <workflow> <duration: 30m, 4h, 1d | until-resolved> [reason]',
  unsilence: '/scheduler unsilence <workflow>',
  resolve: '/scheduler resolve <workflow> <note>',
  history: '/scheduler history <workflow>',
  pause: '/scheduler pause <workflow> [reason]',
  resume: '/scheduler resume <workflow>',
  maintenance: '/scheduler maintenance <workflow|tenant/*> <duration: 30m, 2h, 1d> <reason>',
  digest: '/scheduler digest [tenant, in the platform channel]',
  mine: '/scheduler mine',
  oncall: '/scheduler oncall',
  help: '/scheduler help',
};

/**
 * A usage line as inline code. Its placeholders (`<workflow>`, `<@user>`,
 * `<workflow|tenant>`) are escaped: Slack reads `<…>` as a link or mention
 * even inside backticks, so `<duration: 30m, 4h, 1d | until-resolved>` would
 * show as a link labelled " until-resolved".
 */
export function usageCode(line: string): string {
  return `\`${escapeMrkdwn(line)}\``;
}

export function helpText(): string {
  return ['*/scheduler* commands (in a tenant channel they see that tenant only):', ...Object.values(USAGE).map((u) => `• ${usageCode(u)}`)].join('\n');
}
