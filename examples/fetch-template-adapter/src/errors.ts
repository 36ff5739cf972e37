/**
 * Failures as the contract classifies them (ERR-01..08), retry delays (CFG-05) and key redaction (ERR-07):
 * provider-neutral, beyond the common `{"error": {...}}` envelope.
 */

import { HelixError, type ErrorStepResult } from '@helix-conformance/driver';

export const PROVIDER = 'openai';
const RETRYABLE_CODES = new Set(['provider_rate_limited', 'provider_overloaded', 'provider_timeout', 'provider_error']);
const BASE_RETRY_DELAY_MS = 50; // doubles per attempt
const MAX_RETRY_DELAY_MS = 2000; // CFG-05: whatever the provider asks for, a retry waits at most this

export function errorResult(error: Error): ErrorStepResult {
  return { type: 'error', error, shouldStop: true, stopReason: 'error' };
}

/** HTTP status → [code, retryable] (ERR-01, ERR-02). */
export function classifyStatus(status: number): [string, boolean] {
  if (status === 401 || status === 403) return ['provider_auth_error', false];
  if (status === 429) return ['provider_rate_limited', true];
  if (status === 408) return ['provider_timeout', true];
  if (status === 503 || status === 529) return ['provider_overloaded', true];
  if (status >= 500) return ['provider_error', true];
  return ['provider_invalid_request', false]; // 400, 404, 413, 422 and any other 4xx
}

/** The provider's own account of a failure (an error body or event): the `cause` of a HelixError. */
export class ProviderResponseError extends Error {
  override name = 'ProviderResponseError';
}

/** [message, kind] of an error body, JSON or not; `kind` joins its type, code and status fields. */
export function describeError(body: unknown, limit = 500): [string, string] {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      const snippet = body.split(/\s+/).filter(Boolean).join(' ').slice(0, limit);
      return [snippet || '(empty body)', ''];
    }
  }
  if (isRecord(value) && value.error != null) value = value.error;
  if (isRecord(value)) {
    const fields = value;
    const message = fields.message ?? fields.detail ?? JSON.stringify(fields).slice(0, limit);
    const kind = ['type', 'code', 'status']
      .filter((key) => fields[key] != null)
      .map((key) => String(fields[key]))
      .join(' ');
    return [String(message).slice(0, limit), kind];
  }
  return [String(value).slice(0, limit), ''];
}

/** An error event inside a 200 stream, coded by its type (ERR-03). OpenRouter's has only a numeric `code`, the
 * HTTP status it stands for, so it is classified as that status (ERR-01). */
export function streamError(payload: Record<string, unknown>): HelixError {
  const [message, kind] = describeError(payload);
  const inner = isRecord(payload.error) ? payload.error : undefined;
  const status = inner && !inner.type && typeof inner.code === 'number' ? inner.code : undefined;
  let code: string;
  if (status !== undefined && status >= 400 && status <= 599) code = classifyStatus(status)[0];
  else if (kind.toLowerCase().includes('rate_limit')) code = 'provider_rate_limited';
  else if (kind.toLowerCase().includes('overloaded')) code = 'provider_overloaded';
  else code = 'provider_error';
  const cause = new ProviderResponseError(message);
  return new HelixError(`${PROVIDER}: stream error: ${message}`, { code, retryable: RETRYABLE_CODES.has(code), cause });
}

/** A failure below HTTP: refused connections, resets, a body cut off (ERR-04, ERR-05). */
export function transportError(error: unknown): HelixError {
  return new HelixError(`${PROVIDER}: connection failed (${describe(error)})`, { code: 'provider_error', retryable: true, cause: error });
}

export function timeoutError(cause: Error): HelixError {
  return new HelixError(`${PROVIDER}: ${cause.message}`, { code: 'provider_timeout', retryable: true, cause });
}

/** The terminal error of an aborted step: distinguishable and never retried (AB-03). */
export function abortedError(reason: unknown): HelixError {
  const why = reason instanceof Error ? reason.message : reason == null ? '' : String(reason);
  return new HelixError(`request aborted${why ? `: ${why}` : ''}`, { code: 'request_aborted', retryable: false });
}

/** Milliseconds before retry number `attempt + 1`: `retry-after-ms`, `retry-after` (seconds or an HTTP date) or
 * exponential backoff, always within [0, MAX_RETRY_DELAY_MS] (CFG-05). */
export function retryDelayMs(attempt: number, headers?: Headers): number {
  const hinted = headers ? hintedDelayMs(headers) : undefined;
  const delay = hinted ?? BASE_RETRY_DELAY_MS * 2 ** attempt;
  return Math.max(0, Math.min(delay, MAX_RETRY_DELAY_MS));
}

function hintedDelayMs(headers: Headers): number | undefined {
  const milliseconds = finite(headers.get('retry-after-ms'));
  if (milliseconds !== undefined) return milliseconds;
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const seconds = finite(value);
  if (seconds !== undefined) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : date - Date.now();
}

function finite(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : undefined;
}

/** `text` without the key, bearer tokens or `?key=` values (ERR-07): providers echo keys in their errors. */
export function redact(text: string, apiKey: string): string {
  const hidden = apiKey ? text.split(apiKey).join('[REDACTED]') : text;
  return hidden
    .replace(/(Bearer\s+)[^\s"',]+/gi, '$1[REDACTED]')
    .replace(/([?&](?:key|api_key|api-key)=)[^&\s"']+/gi, '$1[REDACTED]');
}

export function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.name}: ${error.message}${cause}`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
