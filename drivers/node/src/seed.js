// @ts-check
/**
 * `Math.random` seeded per run (the run message's `seed`: the scenario's, replay/seeds.py), so an adapter's
 * jitter (the `openai` SDK's retry backoff) draws the same delays whichever session runs it: the verdict too.
 */

/**
 * Replace `Math.random` with a generator started from `seed` (32 bits); a message without one leaves it as it
 * is (a harness that sends none).
 * @param {unknown} seed
 */
export function seedRandom(seed) {
  if (!Number.isInteger(seed)) return;
  Math.random = mulberry32(Number(seed) >>> 0);
}

/**
 * mulberry32: a small 32-bit generator, uniform in [0, 1) like `Math.random` (not for secrets, as that is not).
 * @param {number} state
 * @returns {() => number}
 */
export function mulberry32(state) {
  let a = state;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
