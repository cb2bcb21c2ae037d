/** The small slice of Block Kit these builders produce, typed loosely on purpose. */
export type Block = Record<string, unknown> & { type: string };

export interface SlackMessage {
  /** Plain fallback for notifications, screen readers and old clients. */
  text: string;
  blocks: Block[];
}
