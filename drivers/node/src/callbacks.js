// @ts-check
/** The recording callbacks handed to the adapter as `input.callbacks`: each call is reported as it happens. */

/** The seed's callbacks (LLMStreamCallbacks). */
export const SEED_CALLBACKS = ['onTextDelta', 'onThinking', 'onToolCall', 'onError'];
/** How long a `slow` callback takes to settle: a consumer pushing to a UI or a socket (STR-08/09). */
export const SLOW_CALLBACK_MS = 20;

/** Thrown on purpose by the `raising` callbacks (STR-11). */
export class CallbackRaised extends Error {
  /** @param {string} name */
  constructor(name) {
    super(`helix-conformance: ${name} raises on purpose (STR-11)`);
    this.name = 'CallbackRaised';
  }
}

/**
 * @typedef {'async' | 'sync' | 'none' | 'raising' | 'slow'} CallbackMode
 * @typedef {object} CallbackHooks
 * @property {(name: string, args: unknown[]) => number} record report a call; returns its sequence number
 * @property {(name: string, seq: number) => void} settled report that an awaited callback settled
 * @property {(name: string) => void} [after] runs once a call is reported (the AB-02 abort from inside)
 */

/**
 * @param {CallbackMode} mode
 * @param {CallbackHooks} hooks
 * @param {string[]} [names]
 * @returns {Record<string, (...args: unknown[]) => unknown> | undefined}
 */
export function recordingCallbacks(mode, hooks, names = SEED_CALLBACKS) {
  if (mode === 'none') return undefined;
  /** @type {Record<string, (...args: unknown[]) => unknown>} */
  const callbacks = {};
  for (const name of names) {
    callbacks[name] = (...args) => {
      const seq = hooks.record(name, args);
      hooks.after?.(name);
      if (mode === 'raising') throw new CallbackRaised(name);
      if (mode === 'async' || mode === 'slow') {
        return awaitedThenable(() => hooks.settled(name, seq), mode === 'slow' ? SLOW_CALLBACK_MS : 0);
      }
      return undefined;
    };
  }
  return callbacks;
}

/**
 * A thenable that starts settling only when someone awaits it (calls `then`), and reports when it settled: a
 * callback whose promise is dropped never reports, as a Python coroutine never awaited (STR-08).
 * @param {() => void} onSettled
 * @param {number} delayMs
 * @returns {PromiseLike<void>}
 */
function awaitedThenable(onSettled, delayMs) {
  /** @type {Promise<void> | undefined} */
  let settling;
  return {
    then(onFulfilled, onRejected) {
      settling ??= new Promise((resolve) => {
        if (delayMs > 0) setTimeout(resolve, delayMs);
        else resolve(undefined);
      }).then(onSettled);
      return settling.then(onFulfilled, onRejected);
    },
  };
}
