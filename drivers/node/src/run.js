// @ts-check
/** One `run`: build the adapter with the context, call generateStep `steps` times, report everything. */

import { recordingCallbacks } from './callbacks.js';
import { Encoder, encodeRaised, safeString } from './encode.js';
import { buildInput, snapshotInput } from './input.js';

/** Event-loop turns watched after the last return, so a callback fired by leftover work is reported (STR-07). */
const LATE_TURNS = 8;

/**
 * @typedef {object} RunState
 * @property {AbortController | undefined} controller
 * @property {string[]} uncaught
 * @property {boolean} active false once `done` is sent: late callbacks are no longer reported
 */

/**
 * @param {Record<string, any>} message the `run` message
 * @param {import('./load.js').LoadedAdapter} loaded
 * @param {(message: Record<string, unknown>) => void} send
 * @param {RunState} state
 */
export async function executeRun(message, loaded, send, state) {
  const id = message.id;
  const encoder = new Encoder();
  const controller = state.controller;
  if (message.abortBefore && controller) controller.abort(abortReason('aborted before the step started'));
  let seq = 0;
  let textDeltas = 0;
  const callbacks = recordingCallbacks(message.callbacks ?? 'async', {
    record(name, args) {
      seq += 1;
      if (state.active) send({ type: 'callback', id, seq, name, args: args.map((a) => encoder.encode(a)) });
      else process.stderr.write(`helix-driver: ${name} called after run ${id} was over\n`);
      return seq;
    },
    settled(name, callSeq) {
      if (state.active) send({ type: 'callback_done', id, seq: callSeq, name });
    },
    after(name) {
      if (name !== 'onTextDelta' || message.abortOnTextDelta == null || !controller) return;
      textDeltas += 1;
      if (textDeltas === message.abortOnTextDelta) {
        send({ type: 'abort_sent', id, name: 'from onTextDelta' });
        controller.abort(abortReason('aborted by the caller from onTextDelta'));
      }
    },
  }, message.callbackNames);

  /** @type {any} */
  let adapter;
  try {
    adapter = await loaded.createAdapter(adapterContext(message.context ?? {}));
  } catch (err) {
    finish(send, state, id, { setupError: `createAdapter threw ${describe(err)}` });
    return;
  }
  const steps = Number.isInteger(message.steps) && message.steps > 0 ? message.steps : 1;
  for (let step = 0; step < steps; step += 1) {
    const input = buildInput(message.input ?? {}, callbacks, message.withSignal === false ? undefined : controller?.signal);
    const inputBefore = snapshotInput(input);
    const started = performance.now();
    const returned = (/** @type {Record<string, unknown>} */ fields) =>
      send({ type: 'returned', id, step, ...fields, inputBefore, inputAfter: snapshotInput(input), stepMs: performance.now() - started });
    let outcome;
    try {
      const generateStep = adapter?.generateStep;
      if (typeof generateStep !== 'function') {
        throw new TypeError(`the object createAdapter returned has no generateStep method (got ${safeString(adapter)})`);
      }
      outcome = generateStep.call(adapter, input);
      if (outcome === null || typeof outcome !== 'object' || typeof outcome.then !== 'function') {
        throw new TypeError(`generateStep returned ${typeof outcome}, not a Promise: make it an async method`);
      }
    } catch (err) {
      returned({ raised: encodeRaised(err) });
      break;
    }
    try {
      const result = await outcome;
      returned({ result: encoder.encode(result) });
    } catch (err) {
      returned({ raised: encodeRaised(err) });
      break;
    }
  }
  for (let turn = 0; turn < LATE_TURNS; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, Number(message.lateWaitMs ?? 1)));
  finish(send, state, id, {});
}

/**
 * @param {(message: Record<string, unknown>) => void} send
 * @param {RunState} state
 * @param {unknown} id
 * @param {Record<string, unknown>} fields
 */
function finish(send, state, id, fields) {
  send({ type: 'done', id, uncaught: state.uncaught, ...fields }); // driver.js adds `pending` and `output`
  state.active = false;
}

/**
 * The context `createAdapter` receives (AdapterContext in camelCase; `timeout` in seconds as in Python).
 * @param {Record<string, any>} raw
 */
function adapterContext(raw) {
  const timeout = typeof raw.timeout === 'number' ? raw.timeout : 60;
  return Object.freeze({
    apiKey: raw.apiKey,
    baseUrl: raw.baseUrl,
    timeout,
    timeoutMs: Math.round(timeout * 1000),
    recordMode: raw.recordMode ?? 'none',
    scriptedResponses: raw.scriptedResponses ?? [],
  });
}

/**
 * The reason a harness abort carries: the DOMException a plain `controller.abort()` would give, with a message.
 * @param {string} reason
 */
export function abortReason(reason) {
  return new DOMException(reason, 'AbortError');
}

/** @param {unknown} err */
function describe(err) {
  return err instanceof Error ? `${err.name}: ${err.message}` : safeString(err);
}
