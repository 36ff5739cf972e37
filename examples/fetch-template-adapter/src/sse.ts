/**
 * Server-Sent Events, incrementally: the same events however the bytes are cut into chunks (STR-10).
 *
 * WHATWG rules the providers rely on: UTF-8 decoded across chunk boundaries, a line ends at `\n`, `\r\n` or a lone
 * `\r` (a `\r\n` split across chunks is one break), an event is dispatched at a blank line, `data:` lines are
 * joined with `\n`, one space after the colon is dropped, `:` lines are comments (keep-alives). `close()` also
 * dispatches a last event that lacks its blank line. `data` is kept verbatim: compare `data.trim()` to `[DONE]`.
 */

export interface SSEEvent {
  /** The `event:` name, undefined when absent. */
  event: string | undefined;
  data: string;
}

export class SSEDecoder {
  private readonly decoder = new TextDecoder('utf-8'); // invalid bytes become U+FFFD, as browsers do
  private tail = ''; // text after the last line break: an incomplete line
  private skipLineFeed = false; // the text so far ended with '\r': a leading '\n' completes that '\r\n'
  private started = false;
  private event: string | undefined;
  private data: string[] = [];

  /** Consume one chunk; return the events it completed (often none, sometimes several). */
  feed(chunk: Uint8Array): SSEEvent[] {
    return this.feedText(this.decoder.decode(chunk, { stream: true }));
  }

  /** At end of stream: undecoded bytes, the unterminated last line and the pending event. */
  close(): SSEEvent[] {
    const events = this.feedText(this.decoder.decode());
    const tail = this.tail;
    this.tail = '';
    if (tail) events.push(...this.lines([tail]));
    if (this.data.length) events.push(this.dispatch());
    return events;
  }

  private feedText(chunk: string): SSEEvent[] {
    let text = chunk;
    if (!text) return [];
    if (!this.started) {
      this.started = true;
      if (text.startsWith('\ufeff')) text = text.slice(1);
    }
    if (this.skipLineFeed) {
      this.skipLineFeed = false;
      if (text.startsWith('\n')) text = text.slice(1);
    }
    text = this.tail + text;
    const lines = text.split(/\r\n|\r|\n/);
    this.tail = lines.pop() ?? '';
    if (text.endsWith('\r')) this.skipLineFeed = true;
    return this.lines(lines);
  }

  private lines(lines: string[]): SSEEvent[] {
    const events: SSEEvent[] = [];
    for (const line of lines) {
      if (!line) {
        if (this.data.length) events.push(this.dispatch());
        this.event = undefined;
        continue;
      }
      if (line.startsWith(':')) continue; // a comment
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (name === 'data') this.data.push(value);
      else if (name === 'event') this.event = value.trim() || undefined;
      // `id:`, `retry:` and unknown fields are ignored
    }
    return events;
  }

  private dispatch(): SSEEvent {
    const event = { event: this.event, data: this.data.join('\n') };
    this.event = undefined;
    this.data = [];
    return event;
  }
}
