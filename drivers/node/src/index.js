// @ts-check
/** @helix-conformance/driver: the driver that lets helix-conformance judge a JavaScript/TypeScript adapter. */

export { SEED_CALLBACKS } from './callbacks.js';
export { runDriver } from './driver.js';

/** The tool the framework injects when the agent has an output schema (FIN-01). */
export const FINISH_TOOL_NAME = '__finish__';

/** A classified failure, as Helix's: `code` says what happened, `category` is the code's prefix before '_'. */
export class HelixError extends Error {
  /**
   * @param {string} message
   * @param {{code: string, retryable?: boolean, statusCode?: number, cause?: unknown}} options
   */
  constructor(message, { code, retryable = false, statusCode, cause }) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'HelixError';
    this.code = code;
    this.retryable = retryable;
    this.statusCode = statusCode;
  }

  get category() {
    return this.code.split('_', 1)[0];
  }

  toJSON() {
    return { name: this.name, message: this.message, code: this.code, category: this.category, retryable: this.retryable, statusCode: this.statusCode };
  }
}
