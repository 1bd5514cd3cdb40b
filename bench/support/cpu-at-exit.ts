/**
 * A preload (`node --import <this module's URL> …`) that writes, as its process exits, the CPU
 * the process has used so far (every thread: main, parse workers, V8's helpers) and its main
 * thread's own, in ms, on one line of stderr: `MAILGATE_BENCH_CPU process=… main=…`. Precise to
 * the microsecond where /proc's clock ticks are 10 ms, which is most of a short command; what
 * Node does after `exit` (freeing the heaps) is not in it, the same for every build.
 */
import { writeSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  process.on('exit', () => {
    const p = process.cpuUsage();
    const t = process.threadCpuUsage();
    writeSync(2, `MAILGATE_BENCH_CPU process=${((p.user + p.system) / 1000).toFixed(2)} main=${((t.user + t.system) / 1000).toFixed(2)}\n`);
  });
}
