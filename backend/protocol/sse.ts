// The one server-sent events reader: our routes send `event: <type>` and one JSON `data:` per event
// (backend/api/sse.ts writes them). Used by the HTTP client (./client.ts), so by the CLI, the editor,
// eval, bench and tests alike.

export interface SseMessage { event: string; data: unknown; id?: string }

/** Incremental parser: feed text chunks, get the complete events so far. Comments and malformed frames are skipped. */
export class SseParser {
  private buffer = '';

  push(chunk: string): SseMessage[] {
    this.buffer += chunk.replace(/\r\n?/g, '\n');
    const out: SseMessage[] = [];
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const frame = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let event = 'message';
      let id: string | undefined;
      const data: string[] = [];
      for (const line of frame.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id') id = value;
      }
      if (data.length === 0) continue;
      try { out.push({ event, data: JSON.parse(data.join('\n')) as unknown, ...(id !== undefined ? { id } : {}) }); } catch { /* not JSON: skipped */ }
    }
    return out;
  }
}

/** Reads a response body as server-sent events until it ends. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    yield* parser.push(decoder.decode(chunk, { stream: true }));
  }
  yield* parser.push(decoder.decode() + '\n\n');
}
