// @ts-check
/** The driver: answers the harness's protocol-v2 messages for one adapter module, and never dies of the adapter. */

import { Channel, PROTOCOL_VERSION } from './channel.js';
import { virtualClock } from './clock.js';
import { describeFailure } from './encode.js';
import { LeftoverWork } from './leftovers.js';
import { LoadError, loadAdapter } from './load.js';
import { OutputCapture } from './output.js';
import { replayLink } from './replay.js';
import { abortReason, executeRun } from './run.js';

/**
 * Runs the driver on the two pipes until `shutdown` or the harness closes the request pipe.
 * @param {{readFd: number, writeFd: number}} fds
 */
export function runDriver({ readFd, writeFd }) {
  // Before any adapter is imported: its timers, Date and performance.now run on the run's clock (clock.js).
  const link = replayLink(virtualClock());
  const channel = new Channel(readFd, writeFd);
  const send = (/** @type {Record<string, unknown>} */ m) => channel.send(m);
  /** @type {import('./load.js').LoadedAdapter | undefined} */
  let loaded;
  /** @type {Map<unknown, import('./run.js').RunState>} */
  const runs = new Map();
  /** @type {string[]} */
  const outsideRuns = [];

  const strayFailure = (/** @type {string} */ what, /** @type {unknown} */ err) => {
    const line = `${what}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`;
    process.stderr.write(`helix-driver: the adapter caused an ${line}\n`);
    const target = [...runs.values()].find((r) => r.active)?.uncaught ?? outsideRuns;
    target.push(line);
  };
  process.on('uncaughtException', (err) => strayFailure('uncaught exception', err));
  process.on('unhandledRejection', (err) => strayFailure('unhandled rejection', err));
  const capture = new OutputCapture();
  capture.install();
  const leftovers = new LeftoverWork();
  leftovers.watchClock(link.clock);
  leftovers.watchImmediates();

  /** @param {Record<string, any>} message */
  const handle = async (message) => {
    if (message.v !== PROTOCOL_VERSION) {
      send({ type: 'error', kind: 'version', message: `helix-driver speaks protocol v${PROTOCOL_VERSION}, got v${message.v}` });
      return;
    }
    switch (message.type) {
      case 'hello':
        try {
          loaded = await loadAdapter(message.adapter, message.cwd ?? process.cwd());
          send({ type: 'ready', pid: process.pid, runtime: `node ${process.version}`, target: loaded.target, spec: loaded.spec });
        } catch (err) {
          const kind = err instanceof LoadError ? err.kind : 'unexpected';
          send({ type: 'error', kind, message: err instanceof Error ? err.message : describeFailure(err) });
        }
        return;
      case 'run': {
        if (loaded === undefined) {
          send({ type: 'error', kind: 'unexpected', message: 'run before a successful hello' });
          return;
        }
        // What escaped after an earlier run's `done` was caused by that run's leftovers: reported with this one.
        const earlier = outsideRuns.splice(0).map((line) => `after an earlier run was over: ${line}`);
        /** @type {import('./run.js').RunState} */
        const state = { controller: message.withSignal === false ? undefined : new AbortController(), uncaught: earlier, active: true };
        runs.set(message.id, state);
        const output = capture.begin();
        leftovers.begin(state);
        /** `done` carries what the adapter printed (shown with the run's failures only) and left scheduled. */
        const runSend = (/** @type {Record<string, unknown>} */ m) =>
          send(m.type === 'done' && m.id === message.id ? { ...m, pending: leftovers.end(state), output: capture.end(output) } : m);
        try {
          await executeRun(message, loaded, runSend, state, link);
        } catch (err) {
          send({ type: 'failed', id: message.id, message: `helix-driver failed: ${describeFailure(err)}` });
        } finally {
          capture.end(output);
          leftovers.end(state);
          runs.delete(message.id);
        }
        return;
      }
      case 'abort': {
        const controller = runs.get(message.id)?.controller;
        if (controller === undefined || controller.signal.aborted) return;
        send({ type: 'abort_sent', id: message.id, name: 'harness' }); // before: callbacks it causes come after
        controller.abort(abortReason(String(message.reason ?? 'aborted by the harness')));
        return;
      }
      case 'shutdown':
        process.exit(0);
        return;
      default:
        send({ type: 'error', kind: 'unexpected', message: `unknown message type ${JSON.stringify(message.type)}` });
    }
  };

  channel.listen(
    (message) => void handle(message),
    (line, reason) => send({ type: 'error', kind: 'unexpected', message: `a request line ${reason}: ${line.slice(0, 200)}` }),
    () => process.exit(0),
  );
}
