// The replay host's side of the link (src/replay.js), played by a test: its listening sockets and its JSON lines.
import net from 'node:net';

/** @param {net.Server} server @returns {Promise<number>} */
export function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(/** @type {net.AddressInfo} */ (server.address()).port)));
}

/** @param {number} ms */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A link's host: each line the link writes is handed to `onMessage` (awaited, in order), with `answer` to write one
 * back. A link destroyed while an answer is on its way is no failure of the test: the socket keeps its errors.
 * @param {(message: Record<string, any>, answer: (reply: Record<string, unknown>) => void) => unknown} onMessage
 */
export function linkHost(onMessage) {
  return net.createServer((socket) => {
    socket.on('error', () => {});
    const answer = (/** @type {Record<string, unknown>} */ reply) => socket.write(`${JSON.stringify(reply)}\n`);
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('data', async (data) => {
      buffer += data;
      let end;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const message = JSON.parse(buffer.slice(0, end));
        buffer = buffer.slice(end + 1);
        await onMessage(message, answer);
      }
    });
  });
}
