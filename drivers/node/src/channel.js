// @ts-check
/** The two protocol pipes: JSON lines in on one fd, JSON lines out on the other, written synchronously. */

import fs from 'node:fs';
import net from 'node:net';

export const PROTOCOL_VERSION = 2;

const sleeper = new Int32Array(new SharedArrayBuffer(4));

export class Channel {
  /**
   * @param {number} readFd requests from the harness
   * @param {number} writeFd messages to the harness
   */
  constructor(readFd, writeFd) {
    this.readFd = readFd;
    this.writeFd = writeFd;
  }

  /**
   * Writes one message as a line before returning, so a callback is on the wire before it returns to the
   * adapter (the order the harness sees is the order things happened).
   * @param {Record<string, unknown>} message
   */
  send(message) {
    const line = Buffer.from(`${JSON.stringify({ v: PROTOCOL_VERSION, ...message })}\n`, 'utf8');
    let offset = 0;
    while (offset < line.length) {
      try {
        offset += fs.writeSync(this.writeFd, line, offset, line.length - offset);
      } catch (err) {
        if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'EAGAIN') throw err;
        Atomics.wait(sleeper, 0, 0, 1); // a non-blocking pipe that is full: wait for the reader
      }
    }
  }

  /**
   * Calls `onMessage` with each parsed line, `onGarbled` with a line that is not a JSON object, `onEnd` at EOF.
   * @param {(message: Record<string, any>) => void} onMessage
   * @param {(line: string, reason: string) => void} onGarbled
   * @param {() => void} onEnd
   */
  listen(onMessage, onGarbled, onEnd) {
    const input = new net.Socket({ fd: this.readFd, readable: true, writable: false });
    let pending = '';
    input.setEncoding('utf8');
    input.on('data', (/** @type {string} */ data) => {
      pending += data;
      let newline;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (line.trim() === '') continue;
        let parsed;
        try {
          parsed = JSON.parse(line);
        } catch (err) {
          onGarbled(line, `not JSON: ${/** @type {Error} */ (err).message}`);
          continue;
        }
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
          onGarbled(line, 'not a JSON object');
          continue;
        }
        onMessage(parsed);
      }
    });
    input.on('end', onEnd);
    input.on('error', onEnd);
    return input;
  }
}
