/** Whatever the Vercel stack throws or streams as an error → a HelixError with the contract's code (ERR-01..07). */

import { APICallError, RetryError } from 'ai';
import { HelixError } from '@helix-conformance/driver';

import { IdleTimeoutError } from './fetch.js';
import type { Provider } from './stop.js';

export const RETRYABLE_CODES = new Set(['provider_rate_limited', 'provider_timeout', 'provider_overloaded', 'provider_error']);

/** HTTP status → (code, retryable) (ERR-01, ERR-02). */
export function classifyStatus(status: number): [string, boolean] {
  if (status === 401 || status === 403) return ['provider_auth_error', false];
  if (status === 429) return ['provider_rate_limited', true];
  if (status === 408) return ['provider_timeout', true];
  if (status === 503 || status === 529) return ['provider_overloaded', true];
  if (status >= 500) return ['provider_error', true];
  return ['provider_invalid_request', false];
}

export function abortedError(reason: unknown): HelixError {
  const why = reason instanceof Error ? reason.message : String(reason ?? 'aborted');
  return new HelixError(`request aborted: ${why}`, { code: 'request_aborted', retryable: false, cause: reason });
}

export interface ErrorContext {
  provider: Provider;
  apiKey: string;
}

/** The HelixError for `error`; the API key never appears in its message (ERR-07). */
export function toHelixError(error: unknown, context: ErrorContext): HelixError {
  if (error instanceof HelixError) return error;
  let exhausted = false;
  let current = error;
  if (RetryError.isInstance(current)) {
    // CFG-04: an error that survived our own retries is no longer retryable for the caller.
    exhausted = current.reason === 'maxRetriesExceeded';
    current = current.lastError;
  }
  const { code, retryable, statusCode, message } = classify(current, context.provider);
  return new HelixError(redact(`${context.provider}: ${message}`, context.apiKey), {
    code,
    retryable: retryable && !exhausted,
    statusCode,
    cause: error,
  });
}

function classify(error: unknown, provider: Provider): { code: string; retryable: boolean; statusCode?: number; message: string } {
  if (causes(error).some((e) => e instanceof IdleTimeoutError)) {
    return { code: 'provider_timeout', retryable: true, message: describe(error) };
  }
  if (APICallError.isInstance(error) && isEventStream(error.responseHeaders) && error.data && typeof error.data === 'object') {
    // ERR-03: an error event inside a 200 stream, to which @ai-sdk/openai gives an invented HTTP status
    // (src/openai-stream-error.ts:117, getStatusCode): classified by its type, as the contract says.
    return streamError(error.data as Record<string, unknown>, provider);
  }
  if (APICallError.isInstance(error) && error.statusCode !== undefined && error.statusCode >= 400) {
    const [code, statusRetryable] = classifyStatus(error.statusCode);
    // ERR-08: OpenAI's 429 insufficient_quota is an exhausted quota, not a rate: retrying cannot help.
    const retryable = statusRetryable && !(error.responseBody ?? '').includes('insufficient_quota');
    return { code, retryable, statusCode: error.statusCode, message: `HTTP ${error.statusCode}: ${error.message}` };
  }
  if (APICallError.isInstance(error)) {
    // ERR-05: a connect failure, or (status 200) a body the SDK could not read or parse after the headers
    return { code: 'provider_error', retryable: true, message: `${error.message}${causeText(error)}` };
  }
  if (error !== null && typeof error === 'object' && !(error instanceof Error)) {
    return streamError(error as Record<string, unknown>, provider); // ERR-03: an error event inside a 200 stream
  }
  return { code: 'provider_error', retryable: true, message: describe(error) };
}

/** An in-stream error payload ({type, message} / {error: {...}} / Google's {code, status}) coded by its type. */
function streamError(payload: Record<string, unknown>, provider: Provider) {
  const inner = (payload.error && typeof payload.error === 'object' ? payload.error : payload) as Record<string, unknown>;
  const kind = [inner.type, inner.code, inner.status].filter((v) => v != null).join(' ').toLowerCase();
  const message = `stream error: ${String(inner.message ?? JSON.stringify(payload))}`;
  const numeric = typeof inner.code === 'number' ? inner.code : /^\d{3}$/.test(String(inner.code)) ? Number(inner.code) : NaN;
  if (inner.type == null && numeric >= 400 && numeric < 600) {
    // OpenRouter: no type, and `code` is the HTTP status the error stands for (ERR-03 → ERR-01's table)
    const [code, retryable] = classifyStatus(numeric);
    return { code, retryable, message };
  }
  if (kind.includes('rate_limit') || kind.includes('resource_exhausted')) return { code: 'provider_rate_limited', retryable: true, message };
  if (kind.includes('overloaded') || (provider === 'google' && kind === 'unavailable')) {
    return { code: 'provider_overloaded', retryable: true, message };
  }
  return { code: 'provider_error', retryable: true, message };
}

function isEventStream(headers: Record<string, string> | undefined): boolean {
  return Object.entries(headers ?? {}).some(([k, v]) => k.toLowerCase() === 'content-type' && v.includes('text/event-stream'));
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 8; depth += 1) {
    chain.push(e);
    e = e instanceof Error ? e.cause : undefined;
  }
  return chain;
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}${causeText(error)}`;
  return String(error);
}

function causeText(error: Error): string {
  return error.cause instanceof Error ? ` (${error.cause.name}: ${error.cause.message})` : '';
}

function redact(text: string, apiKey: string): string {
  return apiKey ? text.split(apiKey).join('[redacted]') : text;
}
