export const USAGE: Record<string, string> = {
  status: '/scheduler status [workflow]',
  run: '/scheduler run <workflow>',
  ack: '/scheduler ack <workflow>',
  silence: '/scheduler silence <workflow> <duration: 30m, 4h, 1d> [reason]',
  unsilence: '/scheduler unsilence <workflow>',
  history: '/scheduler history <workflow>',
  pause: '/scheduler pause <workflow> [reason]',
  resume: '/scheduler resume <workflow>',
  maintenance: '/scheduler maintenance <workflow|tenant> <duration: 30m, 2h, 1d> <reason>',
  help: '/scheduler help',
};

export function helpText(): string {
  return ['*/scheduler* commands (in a tenant channel they see that tenant only):', ...Object.values(USAGE).map((u) => `• \`${u}\``)].join('\n');
}
