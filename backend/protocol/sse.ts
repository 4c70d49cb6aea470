// The one server-sent events reader: our routes send `event: <type>` and one JSON `data:` per event
// (backend/api/sseWriter.ts writes them). Used by the HTTP client (backend/client/apiClient.ts), so by the CLI, the editor,
// eval, bench and tests alike.

export interface SseMessage {
  event: string;
  data: unknown;
  id?: string;
}

/** One event as it came: its `event:` name ('message' when none), its `data:` lines joined, its `id:`. */
export interface SseFrame {
  event: string;
  data: string;
  id?: string;
}

/**
 * The one incremental reader of the text/event-stream format: feed chunks (text, or bytes decoded as UTF-8 across
 * chunk boundaries) as they arrive, get the events they complete. Lines may end in \n, \r\n or \r, split anywhere
 * across chunks; comments and events without data are skipped. The OpenAI-compatible engine reads its streams with
 * it too (backend/model/openai/engine.ts: `data: [DONE]` is not JSON, so it takes the raw frames).
 */
export class SseFrames {
  private buffer = '';
  private event = 'message';
  private id: string | undefined;
  private data: string[] = [];
  private readonly decoder = new TextDecoder('utf-8');

  push(chunk: string | Uint8Array): SseFrame[] {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    const out: SseFrame[] = [];
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
  end(): SseFrame[] {
    const out: SseFrame[] = [];
    if (this.buffer) {
      this.line(this.buffer, out);
      this.buffer = '';
    }
    this.line('', out);
    return out;
  }

  private line(line: string, out: SseFrame[]): void {
    if (line === '') {
      if (this.data.length)
        out.push({ event: this.event, data: this.data.join('\n'), ...(this.id !== undefined ? { id: this.id } : {}) });
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

/** Our routes' events (one JSON `data:` each) over SseFrames; frames whose data is not JSON are skipped. */
export class SseParser {
  private readonly frames = new SseFrames();

  push(chunk: string): SseMessage[] {
    return SseParser.json(this.frames.push(chunk));
  }

  end(): SseMessage[] {
    return SseParser.json(this.frames.end());
  }

  private static json(frames: SseFrame[]): SseMessage[] {
    const out: SseMessage[] = [];
    for (const f of frames) {
      try {
        out.push({ event: f.event, data: JSON.parse(f.data) as unknown, ...(f.id !== undefined ? { id: f.id } : {}) });
      } catch {
        /* not JSON: skipped */
      }
    }
    return out;
  }
}

/** Reads a response body as server-sent events until it ends. */
export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseMessage> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    yield* parser.push(decoder.decode(chunk, { stream: true }));
  }
  yield* parser.push(decoder.decode());
  yield* parser.end();
}
