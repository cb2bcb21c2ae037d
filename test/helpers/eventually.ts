/**
 * Polls `check` until it stops throwing: for effects that land after an ack or
 * in another process. Bounded, in real time; never used to wait out a business
 * deadline (those move on the ManualClock).
 */
export async function eventually<T>(check: () => T | Promise<T>, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
