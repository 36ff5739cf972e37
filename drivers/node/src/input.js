// @ts-check
/** Building the `LLMGenerateInput` an adapter receives from the `run` message's Helix JSON. */

/**
 * A fresh input for one step: copies, so an adapter that edits its input cannot change the next step's; JSON
 * nulls of optional fields are dropped (an absent TypeScript optional is `undefined`, not `null`).
 * @param {Record<string, any>} raw the `input` of the `run` message
 * @param {Record<string, Function> | undefined} callbacks
 * @param {AbortSignal | undefined} abortSignal
 */
export function buildInput(raw, callbacks, abortSignal) {
  const copy = structuredClone(raw);
  /** @type {Record<string, unknown>} */
  const input = {
    messages: (copy.messages ?? []).map(message),
    tools: (copy.tools ?? []).map(tool),
    config: withoutNulls(copy.config ?? {}),
    agentId: copy.agentId,
    agentType: copy.agentType,
  };
  if (abortSignal !== undefined) input.abortSignal = abortSignal;
  if (callbacks !== undefined) input.callbacks = callbacks;
  return input;
}

/**
 * What MSG-07 compares before and after the step: the plain data of the input as the adapter holds it.
 * @param {Record<string, any>} input
 */
export function snapshotInput(input) {
  try {
    return JSON.parse(JSON.stringify({ messages: input.messages, tools: input.tools, config: input.config }));
  } catch (err) {
    return { $unreadable: `the input could not be read after the step: ${/** @type {Error} */ (err).message}` };
  }
}

/** @param {Record<string, any>} raw */
function message(raw) {
  const out = withoutNulls(raw);
  if (out.thinking) out.thinking = withoutNulls(out.thinking);
  if (Array.isArray(out.toolCalls)) out.toolCalls = out.toolCalls.map(withoutNulls);
  return out;
}

/** @param {Record<string, any>} raw */
function tool(raw) {
  const out = withoutNulls(raw);
  const schema = out.inputSchema ?? out.jsonSchema;
  delete out.jsonSchema;
  return { ...out, inputSchema: schema, strict: Boolean(out.strict) };
}

/**
 * A shallow copy without the keys whose value is null (nested values, tool arguments included, are kept).
 * @param {Record<string, any>} obj
 * @returns {Record<string, any>}
 */
function withoutNulls(obj) {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== null));
}
