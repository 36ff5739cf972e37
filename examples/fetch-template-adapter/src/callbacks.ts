/** The caller's callbacks, called as the STR clauses want: awaited, never fatal, silent after an abort. */

import type { LLMStreamCallbacks, ParsedToolCall } from '@helix-conformance/driver';

export class SafeCallbacks {
  constructor(
    private readonly callbacks: LLMStreamCallbacks | undefined,
    private readonly signal: AbortSignal | undefined,
  ) {}

  text(delta: string): Promise<void> {
    return this.call(() => this.callbacks?.onTextDelta?.(delta));
  }

  thinking(delta: string, isComplete: boolean): Promise<void> {
    return this.call(() => this.callbacks?.onThinking?.(delta, isComplete));
  }

  toolCall(call: ParsedToolCall): Promise<void> {
    return this.call(() => this.callbacks?.onToolCall?.(call));
  }

  /** Also after an abort: the abort itself is returned as an error result, reported once (STR-06). */
  error(error: Error): Promise<void> {
    return this.call(() => this.callbacks?.onError?.(error), true);
  }

  private async call(invoke: () => void | PromiseLike<void> | undefined, afterAbort = false): Promise<void> {
    if (this.signal?.aborted && !afterAbort) return; // AB-02: nothing follows an abort
    try {
      await invoke(); // STR-08: a returned promise is awaited before the next callback
    } catch {
      // STR-11: a callback that throws must not break the step (log it with your own logger if you have one)
    }
  }
}
