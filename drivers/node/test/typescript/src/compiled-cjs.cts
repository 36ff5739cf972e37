// Compiled by `tsc` to dist/compiled-cjs.cjs, CommonJS: `exports.spec = ...` as tsc writes it.
export const spec = { name: 'typescript-compiled-cjs', wireProfile: 'openai-chat', model: 'cjs-1' };

export function createAdapter() {
  return {
    async generateStep(input: { messages: { content: string }[] }) {
      return { type: 'text', content: `compiled-cjs: ${input.messages.at(-1)?.content}`, shouldStop: true, stopReason: 'end_turn' };
    },
  };
}
