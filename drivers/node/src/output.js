// @ts-check
/**
 * What the adapter writes to stdout and stderr (console.*, process.stdout/stderr.write, Node's own warnings)
 * while a run is active: kept for that run's `done` instead of flooding the harness's terminal (an SDK may log
 * a line per malformed event, hundreds in a corrupted stream). Outside runs it goes through untouched.
 */

const HEAD_CHARS = 16 * 1024;
const TAIL_CHARS = 48 * 1024;

/** One run's output: its beginning and its end, bounded, and how much of the middle was left out. */
export class RunOutput {
  constructor() {
    this.head = '';
    /** @type {string[]} */
    this.tail = [];
    this.tailChars = 0;
    this.dropped = 0;
  }

  /** @param {string} text */
  add(text) {
    if (this.head.length < HEAD_CHARS && this.tail.length === 0) {
      const room = HEAD_CHARS - this.head.length;
      this.head += text.slice(0, room);
      text = text.slice(room);
    }
    if (!text) return;
    this.tail.push(text);
    this.tailChars += text.length;
    while (this.tailChars > TAIL_CHARS && this.tail.length > 1) {
      const first = /** @type {string} */ (this.tail.shift());
      this.tailChars -= first.length;
      this.dropped += first.length;
    }
  }

  text() {
    const middle = this.dropped ? `\n[… ${this.dropped} characters of output left out …]\n` : '';
    return this.head + middle + this.tail.join('');
  }
}

export class OutputCapture {
  constructor() {
    /** @type {RunOutput | undefined} */
    this.active = undefined;
  }

  /** Route process.stdout and process.stderr writes to the active run, if any (once per process). */
  install() {
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream);
      /** @type {any} */ (stream).write = (/** @type {any} */ chunk, /** @type {any} */ encoding, /** @type {any} */ callback) => {
        const target = this.active;
        if (target === undefined) return write(chunk, encoding, callback);
        target.add(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString(typeof encoding === 'string' ? /** @type {BufferEncoding} */ (encoding) : 'utf8'));
        const done = typeof encoding === 'function' ? encoding : callback;
        if (typeof done === 'function') queueMicrotask(() => done());
        return true;
      };
    }
  }

  /** Start keeping a run's output. */
  begin() {
    this.active = new RunOutput();
    return this.active;
  }

  /**
   * Stop keeping `output` (when it is still the active one) and return its text.
   * @param {RunOutput} output
   */
  end(output) {
    if (this.active === output) this.active = undefined;
    return output.text();
  }
}
