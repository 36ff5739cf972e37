/** A `fetch` with a read (idle) timeout: no byte for `timeoutMs`, from the request on, aborts it (NT-04). */

export class IdleTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`no data from the provider for ${timeoutMs} ms`);
    this.name = 'IdleTimeoutError';
  }
}

export function idleTimeoutFetch(timeoutMs: number, base: typeof fetch = globalThis.fetch): typeof fetch {
  return async (input, init) => {
    const idle = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const disarm = () => clearTimeout(timer);
    const arm = () => {
      disarm();
      timer = setTimeout(() => idle.abort(new IdleTimeoutError(timeoutMs)), timeoutMs);
    };
    const callerSignal = init?.signal ?? undefined;
    callerSignal?.addEventListener('abort', disarm, { once: true });
    const signal = callerSignal ? AbortSignal.any([callerSignal, idle.signal]) : idle.signal;
    arm();
    let response: Response;
    try {
      response = await base(input, { ...init, signal });
    } catch (error) {
      disarm();
      throw idle.signal.aborted ? idle.signal.reason : error;
    }
    if (response.body === null) {
      disarm();
      return response;
    }
    arm();
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          arm();
          controller.enqueue(chunk);
        },
        flush: disarm,
      }),
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
