/** One streamed completion, accumulated event by event, callbacks fired as each delta arrives (STR-01..05). */

import {
  FINISH_TOOL_NAME,
  HelixError,
  type ParsedToolCall,
  type StepResult,
  type StopReason,
  type ThinkingContent,
} from '@helix-conformance/driver';

import type { SafeCallbacks } from './callbacks.js';
import { isRecord, PROVIDER, ProviderResponseError, streamError } from './errors.js';
import type { SSEEvent } from './sse.js';

const STOP_REASONS: Record<string, StopReason> = {
  // STOP-01; anything else → 'unknown', never the provider's string
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  content_filter: 'content_filter',
};

interface CallBuffer {
  id: string;
  name: string;
  arguments: string[];
}

export class ChatStream {
  private text = '';
  private thinking = '';
  private sawThinking = false;
  private inThinking = false;
  private refused = false;
  private readonly calls: CallBuffer[] = [];
  private readonly byIndex = new Map<number, CallBuffer>();
  private finishReason: string | undefined;
  private done = false;
  private error: HelixError | undefined;

  constructor(private readonly emit: SafeCallbacks) {}

  /** Apply events in order; true when reading can stop: `[DONE]` or an error (kept for `result()`). */
  async feed(events: SSEEvent[]): Promise<boolean> {
    try {
      for (const event of events) if (await this.event(event)) return true;
    } catch (error) {
      if (!(error instanceof HelixError)) throw error;
      this.error = error;
      return true;
    }
    return false;
  }

  private async event(event: SSEEvent): Promise<boolean> {
    const data = event.data.trim();
    if (!data || ![undefined, 'message', 'error'].includes(event.event)) return false; // RES-12: unknown events
    if (data === '[DONE]') {
      this.done = true;
      return true;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(data);
    } catch (cause) {
      throw new HelixError(`${PROVIDER}: stream event is not JSON`, { code: 'provider_error', cause }); // ERR-05
    }
    if (!isRecord(payload)) throw new HelixError(`${PROVIDER}: stream event is not a JSON object`, { code: 'provider_error' });
    if (payload.error != null || event.event === 'error') throw streamError(payload); // ERR-03: an error in a 200 stream
    // Chunks with empty `choices` (usage, Azure's first chunk) may come anywhere: skipped.
    const choices = Array.isArray(payload.choices) ? payload.choices : [];
    for (const choice of choices) if (isRecord(choice) && (choice.index ?? 0) === 0) await this.choice(choice);
    return false;
  }

  private async choice(choice: Record<string, unknown>): Promise<void> {
    const delta = choice.delta;
    if (isRecord(delta)) {
      // DeepSeek sends `reasoning_content`; OpenRouter, Groq and Ollama `reasoning`; some only `reasoning_details`.
      const reasoning = delta.reasoning_content || delta.reasoning;
      if (typeof reasoning === 'string' && reasoning) await this.reasoning(reasoning);
      else for (const piece of reasoningDetailsText(delta.reasoning_details)) await this.reasoning(piece);
      if (Array.isArray(delta.content)) for (const part of delta.content) await this.typedPart(part); // Mistral
      else await this.visible(delta.content);
      await this.visible(delta.refusal, true); // a refusal is the model's answer text
      if (Array.isArray(delta.tool_calls) && delta.tool_calls.length) {
        await this.endThinking();
        delta.tool_calls.forEach((entry, position) => {
          if (isRecord(entry)) this.toolDelta(entry, position);
        });
      }
    }
    if (typeof choice.finish_reason === 'string' && choice.finish_reason) this.finishReason = choice.finish_reason;
  }

  private async reasoning(piece: unknown): Promise<void> {
    if (typeof piece !== 'string' || !piece) return;
    this.sawThinking = this.inThinking = true;
    this.thinking += piece;
    await this.emit.thinking(piece, false); // STR-03
  }

  private async visible(piece: unknown, refusal = false): Promise<void> {
    if (typeof piece !== 'string' || !piece) return; // STR-01: no empty deltas
    await this.endThinking(); // STR-04: the thinking block closes before the text
    this.refused ||= refusal;
    this.text += piece;
    await this.emit.text(piece); // STR-02: as it arrives, never buffered
  }

  /** One Mistral content part: `{type: 'text', text}` or `{type: 'thinking', thinking: [...]}`. */
  private async typedPart(part: unknown): Promise<void> {
    if (!isRecord(part)) return;
    if (part.type === 'text') await this.visible(part.text);
    else if (part.type === 'thinking') {
      const items = Array.isArray(part.thinking) ? part.thinking : [{ text: part.thinking }];
      for (const item of items) await this.reasoning(isRecord(item) ? item.text : undefined);
    } // RES-12: other part types are ignored
  }

  /** Merge one tool-call delta: the first id, the first non-empty name, argument fragments concatenated. */
  private toolDelta(entry: Record<string, unknown>, position: number): void {
    const id = typeof entry.id === 'string' ? entry.id : '';
    const buffer = this.slot(entry.index, id, position);
    buffer.id ||= id;
    const fn = entry.function;
    if (!isRecord(fn)) return;
    if (typeof fn.name === 'string' && fn.name && !buffer.name) buffer.name = fn.name;
    const args = isRecord(fn.arguments) ? JSON.stringify(fn.arguments) : fn.arguments; // some servers send an object
    if (typeof args === 'string' && !repeatsWholeCall(buffer, args)) buffer.arguments.push(args);
  }

  /** The call a delta belongs to (RES-06): by `index`; without one (Mistral), by id or position. */
  private slot(index: unknown, id: string, position: number): CallBuffer {
    if (typeof index === 'number') {
      let buffer = this.byIndex.get(index);
      if (buffer === undefined) this.byIndex.set(index, (buffer = this.addCall()));
      return buffer;
    }
    const known = id ? this.calls.find((c) => c.id === id) : undefined;
    if (known) return known;
    if (id || position > 0 || !this.calls.length) return this.addCall();
    return this.calls[this.calls.length - 1]!; // an anonymous continuation of the latest call
  }

  private addCall(): CallBuffer {
    const buffer = { id: '', name: '', arguments: [] };
    this.calls.push(buffer);
    return buffer;
  }

  private async endThinking(): Promise<void> {
    if (!this.inThinking) return;
    this.inThinking = false; // STR-03: exactly one completion call per thinking block
    await this.emit.thinking('', true);
  }

  /** The StepResult of the finished stream; the last callbacks (thinking end, tool calls) fire here. */
  async result(): Promise<StepResult> {
    if (this.error) throw this.error;
    if (!this.done && this.finishReason === undefined) {
      // ERR-04: partial output is not a success
      const cause = new ProviderResponseError('the stream ended without [DONE] or a finish_reason');
      throw new HelixError(`${PROVIDER}: stream ended early`, { code: 'provider_error', retryable: true, cause });
    }
    await this.endThinking();
    const thinking: ThinkingContent | undefined = this.sawThinking ? { content: this.thinking } : undefined; // RES-08
    const text = { type: 'text' as const, content: this.text, ...(thinking && { thinking }), shouldStop: true };
    if (!this.calls.length) {
      // RES-02, STOP-02: truncated, filtered and refused text keep their stop reason
      return { ...text, stopReason: this.refused ? 'refusal' : (STOP_REASONS[this.finishReason ?? ''] ?? 'unknown') };
    }
    if (this.finishReason === 'length') return { ...text, stopReason: 'max_tokens' }; // RES-10: cut-off calls
    const calls = parseToolCalls(this.calls); // RES-03..05, FIN-03
    const finish = calls.find((c) => c.name === FINISH_TOOL_NAME); // FIN-05: the exact name
    if (finish) {
      // FIN-01, FIN-02: wins over its siblings; FIN-04: thinking kept
      return { type: 'structured_output', output: finish.arguments, ...(thinking && { thinking }), shouldStop: true, stopReason: 'tool_use' };
    }
    for (const call of calls) await this.emit.toolCall(call); // STR-05: once per call, complete, in order
    // RES-09: tool calls make a tool-calls result whatever the finish reason; RES-07: accompanying text kept
    return {
      type: 'tool_calls',
      toolCalls: calls,
      subAgentCalls: [],
      ...(this.text && { content: this.text }),
      ...(thinking && { thinking }),
      shouldStop: false,
      stopReason: 'tool_use',
    };
  }
}

/** The readable pieces of OpenRouter's `reasoning_details` (`reasoning.encrypted` has no text). */
function reasoningDetailsText(details: unknown): string[] {
  const pieces: string[] = [];
  for (const entry of Array.isArray(details) ? details : []) {
    if (!isRecord(entry)) continue;
    const piece = entry.type === 'reasoning.text' ? entry.text : entry.type === 'reasoning.summary' ? entry.summary : undefined;
    if (typeof piece === 'string' && piece) pieces.push(piece);
  }
  return pieces;
}

/** A whole JSON object arriving after the call's arguments already form one: the call sent again (seen behind
 * OpenRouter), not more of it; appended, it would make `{...}{...}`. */
function repeatsWholeCall(buffer: CallBuffer, fragment: string): boolean {
  if (!buffer.arguments.length || !fragment.trimStart().startsWith('{')) return false;
  try {
    JSON.parse(buffer.arguments.join(''));
  } catch {
    return false; // the arguments so far are incomplete: this fragment continues them
  }
  return true;
}

/** Completed calls in order (RES-06): the provider's ids (RES-03), arguments parsed to objects (RES-04, RES-05). */
function parseToolCalls(buffers: CallBuffer[]): ParsedToolCall[] {
  const calls: ParsedToolCall[] = [];
  buffers.forEach((buffer, position) => {
    if (!buffer.name) throw new HelixError(`${PROVIDER}: a tool call has no name`, { code: 'provider_error' });
    let id = buffer.id; // a generated one only if it is missing or repeated
    if (!id || calls.some((c) => c.id === id)) id = `call_${position}_${Math.random().toString(16).slice(2, 10)}`;
    calls.push({ id, name: buffer.name, arguments: parseArguments(buffer.arguments.join(''), buffer.name) });
  });
  return calls;
}

function parseArguments(raw: string, name: string): Record<string, unknown> {
  if (!raw.trim()) return {}; // RES-05: absent or empty arguments are {}
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (cause) {
    // FIN-03: also for __finish__, an error result rather than a throw
    throw new HelixError(`${PROVIDER}: tool call '${name}': arguments are not valid JSON`, { code: 'provider_error', cause });
  }
  if (!isRecord(value)) throw new HelixError(`${PROVIDER}: tool call '${name}': arguments are not a JSON object`, { code: 'provider_error' });
  return value;
}
