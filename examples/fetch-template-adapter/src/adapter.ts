/**
 * FetchChatAdapter: a Helix LLMAdapter for OpenAI Chat Completions on plain `fetch`, streamed. One step: abort
 * check, one request with bounded retries, the stream fed to the parser as it arrives under an idle timeout,
 * one StepResult; never a throw, never work left running.
 */

import { HelixError, type LLMAdapter, type LLMGenerateInput, type StepResult } from '@helix-conformance/driver';

import { SafeCallbacks } from './callbacks.js';
import {
  abortedError,
  classifyStatus,
  describe,
  describeError,
  errorResult,
  PROVIDER,
  ProviderResponseError,
  redact,
  retryDelayMs,
  timeoutError,
  transportError,
} from './errors.js';
import { rejectedToolNames, requestBody } from './request.js';
import { SSEDecoder } from './sse.js';
import { ChatStream } from './stream.js';

export interface FetchChatAdapterOptions {
  apiKey: string;
  /** e.g. https://api.openai.com/v1; requests go to `${baseUrl}/chat/completions`. */
  baseUrl: string;
  /** Longest silence while waiting for the response or reading it (NT-04): `AdapterContext.timeoutMs`. */
  idleTimeoutMs: number;
  fetch?: typeof fetch;
}

/** A failure before the stream was accepted, safe to retry (CFG-03): nothing reached the callbacks yet. */
class Retryable {
  constructor(
    readonly error: HelixError,
    readonly headers?: Headers,
  ) {}
}

/** Why the idle timer ended a request (NT-04). */
class IdleTimeout extends Error {
  override name = 'IdleTimeout';
}

export class FetchChatAdapter implements LLMAdapter {
  private readonly url: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: FetchChatAdapterOptions) {
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** One provider call → one StepResult. Never throws (NT-01): every failure is an error result, its message
   * without the key (ERR-07), reported once through onError (STR-06). */
  async generateStep(input: LLMGenerateInput): Promise<StepResult> {
    const emit = new SafeCallbacks(input.callbacks, input.abortSignal);
    let result: StepResult;
    try {
      result = await this.generate(input, emit);
    } catch (error) {
      result = errorResult(new HelixError(`${PROVIDER}: unexpected ${describe(error)}`, { code: 'provider_error', cause: error }));
    }
    if (result.type === 'error') {
      result.error.message = redact(result.error.message, this.options.apiKey);
      await emit.error(result.error);
    }
    return result; // STR-07: every timer and listener of the step is gone: no callback can follow
  }

  private async generate(input: LLMGenerateInput, emit: SafeCallbacks): Promise<StepResult> {
    const signal = input.abortSignal;
    if (signal?.aborted) return errorResult(abortedError(signal.reason)); // AB-01: nothing is sent
    const rejected = rejectedToolNames(input.tools);
    if (rejected.length) {
      // TOOL-05: refused before any request is sent
      const message = `${PROVIDER}: tool names must match ^[a-zA-Z0-9_-]{1,64}$: ${rejected.join(', ')}`;
      return errorResult(new HelixError(message, { code: 'provider_invalid_request' }));
    }
    const init: RequestInit = {
      method: 'POST',
      headers: {
        authorization: `Bearer ${this.options.apiKey}`,
        'content-type': 'application/json',
        accept: 'text/event-stream',
        ...input.config.headers, // CFG-02
      },
      body: JSON.stringify(requestBody(input)),
    };
    const maxRetries = Math.max(0, input.config.maxRetries);
    for (let attempt = 0; ; attempt += 1) {
      const outcome = await this.attempt(init, signal, emit);
      if (signal?.aborted) return errorResult(abortedError(signal.reason)); // AB-02, AB-03: never retried
      if (!(outcome instanceof Retryable)) return outcome;
      if (attempt >= maxRetries) {
        // CFG-04: an error that survived our retries is final; with maxRetries 0 it is left as it came
        return errorResult(maxRetries === 0 ? outcome.error : final(outcome.error));
      }
      if (!(await sleep(retryDelayMs(attempt, outcome.headers), signal))) return errorResult(abortedError(signal?.reason));
    }
  }

  /** One HTTP exchange. Failures after the stream was accepted are final (callbacks may have fired). */
  private async attempt(init: RequestInit, signal: AbortSignal | undefined, emit: SafeCallbacks): Promise<StepResult | Retryable> {
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason); // AB-02: closes the response wherever it waits
    signal?.addEventListener('abort', onAbort, { once: true });
    const idle = new IdleTimer(this.options.idleTimeoutMs, controller);
    let response: Response | undefined;
    try {
      idle.arm();
      try {
        response = await this.fetch(this.url, { ...init, signal: controller.signal });
      } catch (error) {
        if (idle.fired) return errorResult(timeoutError(idle.fired));
        return signal?.aborted ? errorResult(abortedError(signal.reason)) : new Retryable(transportError(error)); // ERR-05
      }
      if (response.status >= 400) return await this.statusError(response, idle); // ERR-01, ERR-02
      const type = response.headers.get('content-type') ?? '';
      if (type && !type.toLowerCase().includes('text/event-stream')) {
        // ERR-05: an HTML page, a JSON body, text/plain where a stream was asked for
        const [detail] = describeError(await idle.read(() => response!.text()));
        const cause = new ProviderResponseError(detail);
        return errorResult(new HelixError(`${PROVIDER}: expected an event stream, got ${type}: ${detail}`, { code: 'provider_error', statusCode: response.status, cause }));
      }
      return await this.read(response, idle, emit, signal);
    } catch (error) {
      if (signal?.aborted) return errorResult(abortedError(signal.reason));
      if (idle.fired) return errorResult(timeoutError(idle.fired));
      if (error instanceof HelixError) return errorResult(error);
      return errorResult(transportError(error)); // ERR-04: cut off mid-stream; not retried, output may have streamed
    } finally {
      idle.disarm();
      signal?.removeEventListener('abort', onAbort);
      if (response?.body && !response.bodyUsed) await response.body.cancel().catch(() => {});
    }
  }

  /** The stream, fed to the parser chunk by chunk as it arrives (STR-02), whatever the chunking (STR-10). */
  private async read(response: Response, idle: IdleTimer, emit: SafeCallbacks, signal: AbortSignal | undefined): Promise<StepResult> {
    const parser = new ChatStream(emit);
    const decoder = new SSEDecoder();
    const reader = response.body!.getReader();
    try {
      for (;;) {
        const { done, value } = await idle.read(() => reader.read());
        if (done) {
          await parser.feed(decoder.close()); // a last event without its blank line
          break;
        }
        if ((await parser.feed(decoder.feed(value))) || signal?.aborted) break; // [DONE], an error, an abort
      }
    } finally {
      await reader.cancel().catch(() => {}); // stop reading at [DONE]: a connection held open costs nothing
    }
    return parser.result();
  }

  private async statusError(response: Response, idle: IdleTimer): Promise<StepResult | Retryable> {
    const [text, kind] = describeError(await idle.read(() => response.text()));
    const status = response.status;
    const message = `${PROVIDER}: HTTP ${status}: ${redact(text, this.options.apiKey)}`;
    const [code, statusRetryable] = classifyStatus(status);
    const retryable = statusRetryable && !(status === 429 && kind.includes('insufficient_quota')); // ERR-08: quota
    const error = new HelixError(message, { code, retryable, statusCode: status, cause: new ProviderResponseError(text) });
    return retryable ? new Retryable(error, response.headers) : errorResult(error); // CFG-03
  }
}

/**
 * A read (idle) timeout: no byte for `ms`, from the request on, aborts it (NT-04). The official JS SDKs only time
 * the wait for the headers; a stalled body would be left to undici's five minutes.
 */
class IdleTimer {
  fired: IdleTimeout | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly ms: number,
    private readonly controller: AbortController,
  ) {}

  arm(): void {
    this.disarm();
    this.timer = setTimeout(() => {
      this.fired = new IdleTimeout(`no data from the provider for ${this.ms} ms`);
      this.controller.abort(this.fired);
    }, this.ms);
  }

  disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** `read()` with the timer armed: each byte that arrives restarts it. */
  async read<T>(read: () => Promise<T>): Promise<T> {
    this.arm();
    try {
      return await read();
    } finally {
      this.disarm();
    }
  }
}

/** The same error, not retryable: the caller must not retry what our own retries could not fix (CFG-04). */
function final(error: HelixError): HelixError {
  const { code, statusCode, cause } = error;
  return new HelixError(error.message, { code, retryable: false, ...(statusCode !== undefined && { statusCode }), cause });
}

/** Wait `ms`, unless the signal fires first (false then); the timer never outlives the wait. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (waited: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(waited);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
