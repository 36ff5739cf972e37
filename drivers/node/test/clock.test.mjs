// The run's clock leaves the machine's load off (src/clock.js, as replay/starvation.py on the Python side).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';

import { VirtualClock } from '../src/clock.js';

/** A meter that reports what the test says the thread waited. */
function meterOf(/** @type {{ms: number}} */ waited) {
  return /** @type {any} */ ({ waitedMs: () => waited.ms, close() {} });
}

function spinMs(/** @type {number} */ ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

test('the wait for a CPU is left off the clock only while the run asks for it', () => {
  const clock = new VirtualClock();
  const waited = { ms: 0 };
  clock.meter = meterOf(waited);
  const start = clock.now();
  waited.ms = 500; // not a virtual-time run: real time counts whole
  spinMs(3);
  assert.ok(clock.now() - start >= 3);
  clock.leaveOffLoad = true;
  spinMs(3);
  const before = clock.now();
  waited.ms = 1500; // a second waited for a CPU, read now
  spinMs(3);
  const after = clock.now();
  assert.ok(after - before < 50, `the clock moved ${after - before} ms over a second of starvation`);
  assert.ok(after >= before, 'the clock never goes back');
});

test('Date and process.hrtime follow the same clock', () => {
  const clock = new VirtualClock();
  clock.meter = meterOf({ ms: 0 });
  clock.skippedMs = 1000;
  const offset = clock.offset();
  assert.ok(Math.abs(offset - 1000) < 1e-6, `offset ${offset}`);
  assert.ok(clock.wallNow() >= Date.now() + 999);
});

const schedstat = existsSync('/proc/thread-self/schedstat');
const taskset = spawnSync('taskset', ['--version']).status === 0;

test(
  'a thread kept off the CPU by busy processes on its core: its clock does not count the wait',
  { skip: !(schedstat && taskset) && 'needs Linux schedstat and taskset' },
  () => {
    // A child pinned to one core beside three busy processes pinned there too measures 300 ms of real time.
    const child = `
      import { VirtualClock } from ${JSON.stringify(new URL('../src/clock.js', import.meta.url).href)};
      const clock = new VirtualClock();
      clock.leaveOffLoad = true;
      const realStart = performance.now(), start = clock.now();
      while (performance.now() - realStart < 300) clock.now();
      console.log(JSON.stringify({ real: performance.now() - realStart, clock: clock.now() - start }));
    `;
    const burners = [1, 2, 3].map(() =>
      spawn('taskset', ['-c', '0', process.execPath, '-e', 'for(;;);'], { stdio: 'ignore' }),
    );
    try {
      const out = spawnSync('taskset', ['-c', '0', process.execPath, '--input-type=module', '-e', child], {
        encoding: 'utf8',
      });
      assert.equal(out.status, 0, out.stderr);
      const { real, clock } = JSON.parse(out.stdout);
      assert.ok(real >= 300);
      assert.ok(clock < real * 0.6, `the clock counted ${clock} ms of ${real} ms shared with 3 busy processes`);
    } finally {
      for (const b of burners) b.kill('SIGKILL');
    }
  },
);
