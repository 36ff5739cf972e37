/** VercelAIAdapter: a Helix LLMAdapter on the Vercel AI SDK's streamText, written as the seed's is. */

import { streamText, type LanguageModel, type TextStreamPart, type ToolSet } from 'ai';
import {
  FINISH_TOOL_NAME,
  HelixError,
  type ErrorStepResult,
  type LLMAdapter,
  type LLMGenerateInput,
  type ParsedToolCall,
  type StepResult,
  type ThinkingContent,
} from '@helix-conformance/driver';

import { SafeCallbacks } from './callbacks.js';
import { abortedError, toHelixError } from './errors.js';
import { toModelMessages, toTools } from './messages.js';
import { rejectedToolNames } from './schema.js';
import { stopReason, type Provider } from './stop.js';

export interface VercelAIAdapterOptions {
  /** Which provider package builds the model: decides the provider-options key and the stop-reason table. */
  provider: Provider;
  /** The Vercel language model for `config.model` (e.g. `(id) => createOpenAI({...}).chat(id)`). */
  languageModel: (modelId: string) => LanguageModel;
  /** Only to keep it out of error messages (ERR-07). */
  apiKey: string;
}

type Part = TextStreamPart<ToolSet>;

export class VercelAIAdapter implements LLMAdapter {
  constructor(private readonly options: VercelAIAdapterOptions) {}

  async generateStep(input: LLMGenerateInput): Promise<StepResult> {
    const emit = new SafeCallbacks(input.callbacks, input.abortSignal);
    let result: StepResult;
    try {
      result = await this.generate(input, emit);
    } catch (error) {
      result = this.errorResult(error, input.abortSignal);
    }
    if (result.type === 'error') await emit.error(result.error); // STR-06: once, only for an error result
    return result;
  }

  private async generate(input: LLMGenerateInput, emit: SafeCallbacks): Promise<StepResult> {
    const { config, abortSignal } = input;
    if (abortSignal?.aborted) return this.errorResult(abortSignal.reason, abortSignal); // AB-01: nothing sent
    const { provider } = this.options;
    const rejected = rejectedToolNames(input.tools, provider);
    if (rejected.length) {
      // TOOL-05: refused before any request is sent, as the provider would refuse it (HTTP 400)
      const message = `${provider}: tool names the API does not accept: ${rejected.join(', ')}`;
      return { type: 'error', error: new HelixError(message, { code: 'provider_invalid_request' }), shouldStop: true, stopReason: 'error' };
    }
    const providerKey = provider;
    const providerOptions: Record<string, Record<string, any>> = {};
    const own = config.providerOptions?.[providerKey] ?? (provider === 'google' ? config.providerOptions?.gemini : undefined);
    if (own) providerOptions[providerKey] = { ...own };
    if (provider === 'openai' && config.caching === 'auto') {
      providerOptions.openai = { promptCacheKey: `helix-${input.agentId}`, ...providerOptions.openai }; // CACHE-03
    }
    const stream = streamText({
      model: this.options.languageModel(config.model),
      messages: toModelMessages(input.messages, provider, config),
      allowSystemInMessages: true,
      tools: toTools(input.tools, provider, config),
      maxOutputTokens: config.maxOutputTokens,
      temperature: config.temperature,
      topP: config.topP,
      topK: config.topK,
      presencePenalty: config.presencePenalty,
      frequencyPenalty: config.frequencyPenalty,
      stopSequences: config.stopSequences,
      seed: config.seed,
      maxRetries: config.maxRetries, // CFG-03: the SDK retries 408/409/429/5xx with backoff
      headers: config.headers,
      providerOptions: Object.keys(providerOptions).length ? providerOptions : undefined,
      abortSignal,
      includeRawChunks: provider === 'openai', // for `refusal` deltas, which @ai-sdk/openai's chat model drops
      onError: () => {}, // errors arrive as `error` parts below; the default handler only logs them
    });

    let text = '';
    let thinkingText = '';
    let sawThinking = false;
    let signature: string | undefined;
    const redacted: string[] = [];
    const openThinking = new Set<string>();
    const visibleThinking = new Set<string>();
    const calls: Array<Extract<Part, { type: 'tool-call' }>> = [];
    let raw: string | undefined;
    let finishReason: Extract<Part, { type: 'finish-step' }>['finishReason'] | undefined;
    let finished = false;
    let refused = false;

    for await (const part of stream.fullStream) {
      if (abortSignal?.aborted) break;
      switch (part.type) {
        case 'text-delta':
          if (part.text) {
            text += part.text;
            await emit.text(part.text); // STR-02: as it arrives
          }
          signature = googleSignature(part) ?? signature;
          break;
        case 'reasoning-start': {
          sawThinking = true;
          openThinking.add(part.id);
          const data = anthropicMeta(part)?.redactedData;
          if (typeof data === 'string') redacted.push(data);
          break;
        }
        case 'reasoning-delta': {
          sawThinking = true;
          const proof = anthropicMeta(part)?.signature ?? googleSignature(part); // Anthropic: signature_delta
          if (typeof proof === 'string' && proof) signature = proof;
          if (part.text) {
            thinkingText += part.text;
            visibleThinking.add(part.id);
            await emit.thinking(part.text, false); // STR-03
          }
          break;
        }
        case 'reasoning-end': {
          const proof = anthropicMeta(part)?.signature ?? googleSignature(part);
          if (typeof proof === 'string' && proof) signature = proof;
          // STR-03: one completion per block that streamed thinking (a redacted block streams none)
          if (openThinking.delete(part.id) && visibleThinking.has(part.id)) await emit.thinking('', true);
          break;
        }
        case 'tool-call':
          // Anthropic server tools (web search, code execution, MCP) ran at the provider: no call for the client
          if (part.providerExecuted) break;
          calls.push(part);
          signature = googleSignature(part) ?? signature;
          break;
        case 'finish-step':
          raw = part.rawFinishReason;
          finishReason = part.finishReason;
          break;
        case 'finish':
          finished = true;
          raw ??= part.rawFinishReason;
          finishReason ??= part.finishReason;
          break;
        case 'error':
          throw part.error;
        case 'raw': {
          // ERR-03: OpenRouter's error chunk after the finish also carries `choices`, so the SDK's chunk schema
          // takes it for a normal chunk and strips `error` (KNOWN_BUGS VERCEL-OPENAI-ERROR-CHUNK).
          const rawError = (part.rawValue as { error?: unknown } | null)?.error;
          if (rawError && typeof rawError === 'object') throw part.rawValue;
          const refusal = openaiRefusal(part.rawValue);
          if (refusal) {
            // STOP-01 (SHOULD): an OpenAI refusal is the model's answer text, and the step stops as refused
            refused = true;
            text += refusal;
            await emit.text(refusal);
          }
          break;
        }
        case 'abort':
          break;
        default:
          break; // RES-12: other parts (sources, tool-input streaming, raw, start events) are not ours
      }
    }
    if (abortSignal?.aborted) return this.errorResult(abortSignal.reason, abortSignal);
    if (!finished || (raw === undefined && provider !== 'openai')) {
      // ERR-04: Anthropic always ends with a stop_reason (message_delta) and Gemini with a candidate's
      // finishReason (or a prompt blockReason); without one the stream was cut, though the SDK reports a finish
      // ('other'). OpenAI Chat cannot be told apart: its terminator, `data: [DONE]`, never reaches us (KNOWN_BUGS).
      throw new HelixError(`${provider}: the stream ended before the provider's finish reason`, { code: 'provider_error', retryable: true });
    }
    for (const id of openThinking) {
      openThinking.delete(id);
      if (visibleThinking.has(id)) await emit.thinking('', true);
    }

    const thinking: ThinkingContent | undefined = sawThinking || signature
      ? { content: thinkingText, ...(signature ? { signature } : {}), ...(redacted.length ? { redacted } : {}) }
      : undefined;
    const stop = refused ? 'refusal' : stopReason(provider, raw, finishReason);
    if (calls.length === 0 || stop === 'max_tokens') {
      // STOP-02: truncated, filtered and refused text keep their reason; RES-10: cut-off calls are not executable
      return { type: 'text', content: text, ...(thinking ? { thinking } : {}), shouldStop: true, stopReason: stop };
    }
    const parsed = this.parseCalls(calls);
    const finish = parsed.find((call) => call.name === FINISH_TOOL_NAME); // FIN-05: the exact name only
    if (finish) return { type: 'structured_output', output: finish.arguments, ...(thinking ? { thinking } : {}), shouldStop: true, stopReason: 'tool_use' };
    for (const call of parsed) await emit.toolCall(call); // STR-05: complete, once each, in result order
    return {
      type: 'tool_calls',
      toolCalls: parsed,
      subAgentCalls: [],
      ...(text ? { content: text } : {}), // RES-07
      ...(thinking ? { thinking } : {}),
      shouldStop: false,
      stopReason: 'tool_use',
    };
  }

  /** The SDK's parsed calls; a call whose input is not a JSON object is an error (FIN-03, RES-04). */
  private parseCalls(calls: Array<Extract<Part, { type: 'tool-call' }>>): ParsedToolCall[] {
    const seen = new Set<string>();
    return calls.map((call, position) => {
      const input = call.input;
      if (input === null || typeof input !== 'object' || Array.isArray(input)) {
        const cause = 'error' in call ? call.error : undefined;
        throw new HelixError(`${this.options.provider}: tool call ${call.toolName} has arguments that are not a JSON object`, {
          code: 'provider_error',
          retryable: true,
          cause,
        });
      }
      let id = call.toolCallId;
      if (!id || seen.has(id)) id = `call_${position}_${Math.random().toString(16).slice(2, 10)}`; // RES-03
      seen.add(id);
      return { id, name: call.toolName, arguments: input as Record<string, unknown> };
    });
  }

  private errorResult(error: unknown, signal: AbortSignal | undefined): ErrorStepResult {
    const helix = signal?.aborted
      ? abortedError(signal.reason) // AB-03: distinguishable, terminal
      : toHelixError(error, { provider: this.options.provider, apiKey: this.options.apiKey });
    return { type: 'error', error: helix, shouldStop: true, stopReason: 'error' };
  }
}

function anthropicMeta(part: { providerMetadata?: unknown }): Record<string, unknown> | undefined {
  return (part.providerMetadata as Record<string, Record<string, unknown>> | undefined)?.anthropic;
}

function googleSignature(part: { providerMetadata?: unknown }): string | undefined {
  const value = (part.providerMetadata as Record<string, Record<string, unknown>> | undefined)?.google?.thoughtSignature;
  return typeof value === 'string' && value ? value : undefined;
}

function openaiRefusal(chunk: unknown): string {
  const choices = (chunk as { choices?: Array<{ delta?: { refusal?: unknown } }> } | null)?.choices;
  if (!Array.isArray(choices)) return '';
  return choices.map((c) => (typeof c?.delta?.refusal === 'string' ? c.delta.refusal : '')).join('');
}
