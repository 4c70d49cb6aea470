// Incremental parser for server-sent events (text/event-stream): feed it chunks as they arrive, get
// each event's data once its blank line has been seen. Comments (`: …`) and other fields are ignored.
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private readonly decoder = new TextDecoder('utf-8');

  /** Returns the data of every event completed by this chunk. */
  push(chunk: Uint8Array | string): string[] {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    const events: string[] = [];
    let newline: number;
    while ((newline = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, newline);
      const width = this.buffer.startsWith('\r\n', newline) ? 2 : 1;
      // A lone \r at the very end may be the first half of \r\n: wait for more.
      if (width === 1 && this.buffer[newline] === '\r' && newline === this.buffer.length - 1) break;
      this.buffer = this.buffer.slice(newline + width);
      this.line(line, events);
    }
    return events;
  }

  /** Ends the stream: an event without its final blank line still counts. */
  end(): string[] {
    const events: string[] = [];
    if (this.buffer.length > 0) {
      this.line(this.buffer, events);
      this.buffer = '';
    }
    this.line('', events);
    return events;
  }

  private line(line: string, events: string[]): void {
    if (line === '') {
      if (this.data.length > 0) events.push(this.data.join('\n'));
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
  }
}
