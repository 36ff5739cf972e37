/** A `fetch` with a read (idle) timeout: no byte for `timeoutMs` while one is awaited aborts it (NT-04). */

export class IdleTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`no data from the provider for ${timeoutMs} ms`);
    this.name = 'IdleTimeoutError';
  }
}

/**
 * The timer runs only while a read is pending (the headers, then each chunk) and is cleared when it settles, and
 * when the body is cancelled or fails: nothing of it outlives the response (HARN-04).
 */
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
    const signal = callerSignal ? AbortSignal.any([callerSignal, idle.signal]) : idle.signal;
    const failure = (error: unknown) => (idle.signal.aborted ? idle.signal.reason : error);
    arm();
    let response: Response;
    try {
      response = await base(input, { ...init, signal });
    } catch (error) {
      throw failure(error);
    } finally {
      disarm();
    }
    if (response.body === null) return response;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        arm();
        try {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (error) {
          controller.error(failure(error));
        } finally {
          disarm();
        }
      },
      cancel(reason) {
        disarm();
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
