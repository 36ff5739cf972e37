/** Provider finish reasons → Helix stop reasons, per wire profile (CONTRACT STOP-01 table). */

import type { FinishReason } from 'ai';
import type { StopReason } from '@helix-conformance/driver';

export type Provider = 'openai' | 'anthropic' | 'google';

const RAW: Record<Provider, Record<string, StopReason>> = {
  openai: {
    stop: 'end_turn',
    tool_calls: 'tool_use',
    function_call: 'tool_use',
    length: 'max_tokens',
    content_filter: 'content_filter',
  },
  anthropic: {
    end_turn: 'end_turn',
    tool_use: 'tool_use',
    max_tokens: 'max_tokens',
    model_context_window_exceeded: 'max_tokens',
    refusal: 'refusal',
    stop_sequence: 'stop_sequence',
    pause_turn: 'end_turn',
  },
  google: {
    STOP: 'end_turn',
    MAX_TOKENS: 'max_tokens',
    SAFETY: 'content_filter',
    RECITATION: 'content_filter',
    BLOCKLIST: 'content_filter',
    PROHIBITED_CONTENT: 'content_filter',
    SPII: 'content_filter',
    IMAGE_SAFETY: 'content_filter',
    MODEL_ARMOR: 'content_filter',
  },
};

/** Vercel's normalised reasons, used when the provider's own value is not known (the seed adapter's table). */
const NORMALISED: Partial<Record<FinishReason, StopReason>> = {
  stop: 'end_turn',
  length: 'max_tokens',
  'content-filter': 'content_filter',
  'tool-calls': 'tool_use',
};

/**
 * The stop reason of a step: the provider's raw value where Vercel passes it on (`rawFinishReason`), since the
 * contract's table is per wire value (Anthropic `refusal`, `stop_sequence` have no Vercel equivalent).
 */
export function stopReason(provider: Provider, raw: string | undefined, normalised: FinishReason | undefined): StopReason {
  // Gemini: a prompt blocked before any candidate (promptFeedback.blockReason, any value) is a filter too.
  if (provider === 'google' && normalised === 'content-filter') return 'content_filter';
  if (raw !== undefined) return RAW[provider][raw] ?? 'unknown';
  return (normalised && NORMALISED[normalised]) ?? 'unknown';
}
