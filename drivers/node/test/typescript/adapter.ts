// A TypeScript adapter as authors write it: interfaces, an enum, parameter properties, a sibling imported as .js.
import { Mode, split } from './words.js';

interface Context {
  baseUrl: string;
  timeoutMs: number;
}

interface Input {
  messages: { role: string; content: string }[];
  callbacks?: { onTextDelta?: (delta: string) => void | PromiseLike<void> };
}

export const spec = { name: 'typescript-ts', wireProfile: 'openai-chat', model: 'ts-1', capabilities: [] as string[] };

class EchoAdapter {
  constructor(private readonly mode: Mode) {}

  async generateStep(input: Input) {
    const text = input.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
    for (const delta of split(text)) await input.callbacks?.onTextDelta?.(delta);
    return { type: 'text' as const, content: `${this.mode}: ${text}`, shouldStop: true, stopReason: 'end_turn' as const };
  }
}

export function createAdapter(_context: Context): EchoAdapter {
  return new EchoAdapter(Mode.Echo);
}
