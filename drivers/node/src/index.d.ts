/** Types of the Helix Agents adapter contract (the seed's TypeScript interface), as the driver hands it over. */

export type StopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'content_filter'
  | 'refusal'
  | 'stop_sequence'
  | 'error'
  | 'unknown';

export interface ThinkingContent {
  content: string;
  /** The provider's opaque proof of the reasoning (Anthropic `signature`, Gemini `thoughtSignature`). */
  signature?: string;
  /** Opaque reasoning the provider returned encrypted (Anthropic `redacted_thinking` data), verbatim. */
  redacted?: string[];
}

export interface ToolCallInfo {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type Message =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCallInfo[]; thinking?: ThinkingContent }
  | { role: 'tool'; toolCallId: string; toolName: string; content: string };

/** A tool offered to the model. The harness has no Zod: `inputSchema` is a JSON Schema object. */
export interface Tool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  strict: boolean;
}

export const FINISH_TOOL_NAME: '__finish__';

export interface LLMConfig {
  model: string;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  stopSequences?: string[];
  seed?: number;
  maxRetries: number;
  caching: 'auto' | false;
  headers?: Record<string, string>;
  providerOptions?: Record<string, Record<string, unknown>>;
}

export interface ParsedToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ParsedSubAgentCall {
  id: string;
  agentType: string;
  input: unknown;
}

/** Each optional; each may return a Promise, which the adapter awaits before the next callback (STR-08). */
export interface LLMStreamCallbacks {
  onTextDelta?: (delta: string) => void | PromiseLike<void>;
  onThinking?: (content: string, isComplete: boolean) => void | PromiseLike<void>;
  onToolCall?: (call: ParsedToolCall) => void | PromiseLike<void>;
  onError?: (error: Error) => void | PromiseLike<void>;
}

export interface LLMGenerateInput {
  messages: Message[];
  tools: Tool[];
  config: LLMConfig;
  abortSignal?: AbortSignal;
  callbacks?: LLMStreamCallbacks;
  agentId: string;
  agentType: string;
}

export interface TextStepResult {
  type: 'text';
  content: string;
  thinking?: ThinkingContent;
  shouldStop: boolean;
  stopReason: StopReason;
}

export interface ToolCallsStepResult {
  type: 'tool_calls';
  toolCalls: ParsedToolCall[];
  subAgentCalls: ParsedSubAgentCall[];
  content?: string;
  thinking?: ThinkingContent;
  shouldStop: false;
  stopReason: 'tool_use';
}

export interface StructuredOutputStepResult {
  type: 'structured_output';
  output: unknown;
  thinking?: ThinkingContent;
  shouldStop: true;
  stopReason: 'tool_use';
}

export interface ErrorStepResult {
  type: 'error';
  error: Error;
  shouldStop: true;
  stopReason: 'error';
}

export type StepResult = TextStepResult | ToolCallsStepResult | StructuredOutputStepResult | ErrorStepResult;

export interface LLMAdapter {
  generateStep(input: LLMGenerateInput): Promise<StepResult>;
}

export type Capability = 'thinking' | 'parallel_tool_calls' | 'retries' | 'caching' | 'abort' | 'non_streaming';

/** What an adapter module exports as `spec` (beside `createAdapter`). */
export interface AdapterSpec {
  name: string;
  /** Whose cassettes are replayed: 'openai-chat', 'anthropic-messages', 'gemini' (helix-conformance list profiles). */
  wireProfile: string;
  model: string;
  capabilities?: Capability[];
  /** The servers of the wire profile this adapter is written for (helix-conformance list servers), e.g.
   * ['openai', 'deepseek']; default: the profile's own provider. The quirks of the others do not fail the gate:
   * they are shown in the compatibility matrix. */
  servers?: string[];
  description?: string;
  apiKeyEnv?: string;
  /** Relative to the module's directory. */
  cassetteDir?: string;
}

/** Handed to `createAdapter` for every scenario run. In replay `apiKey` is a dummy. */
export interface AdapterContext {
  readonly apiKey: string;
  /** The replay server's base URL for this run, standing for the provider's (e.g. https://api.openai.com/v1). */
  readonly baseUrl: string;
  /** The read (idle) timeout to use, in seconds (short in replay: a stalled stream must end by it, NT-04). */
  readonly timeout: number;
  readonly timeoutMs: number;
  readonly recordMode: 'none' | 'once' | 'new' | 'rewrite';
  readonly scriptedResponses: readonly unknown[];
}

export type CreateAdapter = (context: AdapterContext) => LLMAdapter | Promise<LLMAdapter>;

export class HelixError extends Error {
  constructor(message: string, options: { code: string; retryable?: boolean; statusCode?: number; cause?: unknown });
  readonly code: string;
  readonly retryable: boolean;
  readonly statusCode: number | undefined;
  readonly category: string;
}

export const SEED_CALLBACKS: readonly string[];
export function runDriver(fds: { readFd: number; writeFd: number }): void;
