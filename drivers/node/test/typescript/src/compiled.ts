// Compiled by `tsc` (npm ci runs `prepare`) to dist/compiled.js, an ES module: what a package ships.
export const spec = { name: 'typescript-compiled', wireProfile: 'openai-chat', model: 'js-1', capabilities: ['abort'] };

export function createAdapter(context: { baseUrl: string }) {
  return {
    async generateStep(input: { messages: { content: string }[] }) {
      return { type: 'text', content: `compiled: ${input.messages.at(-1)?.content} via ${context.baseUrl}`, shouldStop: true, stopReason: 'end_turn' };
    },
  };
}
