/**
 * Which due re-render takes the workspace's next chat.update slot (Tier 3,
 * one every 1.2 s, shared by every tenant's storm messages and alert roots):
 * the one whose newest undisplayed event is the oldest (`target`, an event
 * id). A message that keeps changing keeps moving back, so a storm of one
 * tenant whose members change every second cannot hold another tenant's
 * root from showing its alert's state; and nothing waits forever, since
 * new events only ever come with larger ids. On a tie the storm message
 * goes first (it stands for many alerts). An ended storm's last render with
 * no newer event counts from the event it shows.
 */
export type RenderChoice = 'storm' | 'root';

export function nextRender(storm: { target: number } | undefined, root: { target: number } | undefined): RenderChoice | undefined {
  if (storm && (!root || storm.target <= root.target)) return 'storm';
  return root ? 'root' : undefined;
}
