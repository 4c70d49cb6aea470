// The one server-sent events reader: our routes send `event: <type>` and one JSON `data:` per event
// (backend/api/sse.ts writes them). Used by the HTTP client (./client.ts), so by the CLI, the editor,
// eval, bench and tests alike.

export interface SseMessage {
  event: string;
  data: unknown;
  id?: string;
}

/**
 * Incremental parser: feed text chunks as they arrive, get the events they complete (`event:` name, JSON `data:`,
 * `id:`). Lines may end in \n, \r\n or \r, split anywhere across chunks; comments and frames whose data is not
 * JSON are skipped.
 */
export class SseParser {
  private buffer = '';
  private event = 'message';
  private id: string | undefined;
  private data: string[] = [];

  push(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const out: SseMessage[] = [];
    let newline: number;
    while ((newline = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const width = this.buffer.startsWith('\r\n', newline) ? 2 : 1;
      // a lone \r at the very end may be the first half of \r\n: wait for more
      if (width === 1 && this.buffer[newline] === '\r' && newline === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + width);
      this.line(line, out);
    }
    return out;
  }

  /** Ends the stream: an event without its final blank line still counts. */
  end(): SseMessage[] {
    const out: SseMessage[] = [];
    if (this.buffer) {
      this.line(this.buffer, out);
      this.buffer = '';
    }
    this.line('', out);
    return out;
  }

  private line(line: string, out: SseMessage[]): void {
    if (line === '') {
      if (this.data.length) {
        try {
          out.push({
            event: this.event,
            data: JSON.parse(this.data.join('\n')) as unknown,
            ...(this.id !== undefined ? { id: this.id } : {}),
          });
        } catch {
          /* not JSON: skipped */
        }
      }
      this.event = 'message';
      this.id = undefined;
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id') this.id = value;
  }
}

/** Reads a response body as server-sent events until it ends. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    yield* parser.push(decoder.decode(chunk, { stream: true }));
  }
  yield* parser.push(decoder.decode());
  yield* parser.end();
}
