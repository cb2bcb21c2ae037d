/**
 * Keeps only the last `limit` bytes of everything written to it, so a command
 * that prints megabytes costs a few KB of memory. Chunks from stdout and
 * stderr are kept in arrival order.
 */
export class OutputTail {
  private chunks: Buffer[] = [];
  private size = 0;
  private dropped = 0;

  constructor(readonly limit: number) {}

  write(chunk: Buffer): void {
    if (chunk.length >= this.limit) {
      this.dropped += this.size + chunk.length - this.limit;
      this.chunks = [chunk.subarray(chunk.length - this.limit)];
      this.size = this.limit;
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size - this.chunks[0]!.length >= this.limit) {
      const first = this.chunks.shift()!;
      this.size -= first.length;
      this.dropped += first.length;
    }
  }

  /**
   * The kept text; a cut through a multi-byte character at the start is
   * dropped, and a marker says what was cut. `clean` sees the text before the
   * marker is added, and whether it was cut at its start (where a secret may
   * have been cut in two: redactSecrets' `cut`).
   */
  text(clean: (body: string, cutAtStart: boolean) => string = (body) => body): string {
    let buf = Buffer.concat(this.chunks, this.size);
    let cut = this.dropped;
    if (buf.length > this.limit) {
      cut += buf.length - this.limit;
      buf = buf.subarray(buf.length - this.limit);
    }
    let start = 0;
    // Skip UTF-8 continuation bytes (10xxxxxx) left over from a character split by the cut.
    if (cut > 0) while (start < buf.length && start < 3 && (buf[start]! & 0xc0) === 0x80) start++;
    const body = clean(buf.subarray(start).toString('utf8'), cut > 0);
    return cut > 0 ? `[… ${cut + start} earlier bytes not kept]\n${body}` : body;
  }
}
