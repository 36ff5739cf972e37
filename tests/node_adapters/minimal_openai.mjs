// A minimal JavaScript adapter for tests/test_node_driver.py: OpenAI Chat Completions over fetch, streamed text
// and tool calls, errors as results. Not a complete adapter: only what the selected scenarios judge.
export const spec = { name: 'minimal-openai-js', wireProfile: 'openai-chat', model: 'gpt-4o-mini', capabilities: ['abort'] };

const STOP = { stop: 'end_turn', length: 'max_tokens', content_filter: 'content_filter', tool_calls: 'tool_use' };
const BUFFERED = process.env.HELIX_TEST_BUFFERED === '1'; // the broken variant: callbacks only at the end (STR-02)
const NOISY = process.env.HELIX_TEST_NOISY === '1'; // logs like an SDK reading a stream it cannot parse

export function createAdapter(context) {
  return {
    async generateStep(input) {
      try {
        return await step(context, input);
      } catch (err) {
        const aborted = input.abortSignal?.aborted;
        const error = aborted
          ? Object.assign(new Error('request aborted'), { code: 'request_aborted', category: 'request', retryable: false })
          : Object.assign(new Error(`openai: ${err.message}`), { code: 'provider_error', category: 'provider', retryable: true });
        await input.callbacks?.onError?.(error);
        return { type: 'error', error, shouldStop: true, stopReason: 'error' };
      }
    },
  };
}

async function step(context, input) {
  if (NOISY) {
    for (let i = 0; i < 300; i += 1) console.error('Could not parse message into JSON: data: {"broken"');
    console.log(`step for ${input.messages.at(-1).content.slice(0, 20)}`);
  }
  const messages = input.messages.map((m) =>
    m.role === 'tool' ? { role: 'tool', tool_call_id: m.toolCallId, content: m.content } : { role: m.role, content: m.content },
  );
  const response = await fetch(`${context.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${context.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: input.config.model, messages, stream: true }),
    signal: AbortSignal.any([AbortSignal.timeout(context.timeoutMs * 5), ...(input.abortSignal ? [input.abortSignal] : [])]),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const decoder = new TextDecoder();
  let buffer = '';
  let text = '';
  let finish;
  const later = [];
  for await (const bytes of response.body) {
    buffer += decoder.decode(bytes, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 1);
      if (!line.startsWith('data:') || line === 'data: [DONE]') continue;
      for (const choice of JSON.parse(line.slice(5)).choices ?? []) {
        const delta = choice.delta?.content;
        if (delta) {
          text += delta;
          if (BUFFERED) later.push(delta);
          else await input.callbacks?.onTextDelta?.(delta);
        }
        finish = choice.finish_reason ?? finish;
      }
    }
  }
  for (const delta of later) await input.callbacks?.onTextDelta?.(delta);
  return { type: 'text', content: text, shouldStop: true, stopReason: STOP[finish] ?? 'unknown' };
}
