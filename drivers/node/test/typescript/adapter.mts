// An ES module in TypeScript (.mts), its exports as a default object.
type Step = { type: 'text'; content: string; shouldStop: true; stopReason: 'end_turn' };

export default {
  spec: { name: 'typescript-mts', wireProfile: 'anthropic-messages', model: 'mts-1' },
  createAdapter: () => ({
    async generateStep(input: { messages: { content: string }[] }): Promise<Step> {
      return { type: 'text', content: `mts: ${input.messages.at(-1)?.content}`, shouldStop: true, stopReason: 'end_turn' };
    },
  }),
};
