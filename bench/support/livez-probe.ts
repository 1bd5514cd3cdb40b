/**
 * The /livez probe of bench:attack on a worker thread of its own: the attackers' sockets (60
 * writes of 39 MB) run on the bench's main thread, and a probe sharing that event loop would time
 * the attack client's own stalls, not the server's. Runs `GET /livez` every `intervalMs` until
 * `deadline` and posts the latencies (ms) back.
 */
import { request } from 'node:http';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

interface Job {
  port: number;
  deadline: number;
  intervalMs: number;
}

function livez(port: number): Promise<void> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/livez', agent: false });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve());
    });
    req.on('error', () => resolve());
    req.end();
  });
}

async function run(job: Job): Promise<number[]> {
  const out: number[] = [];
  while (Date.now() < job.deadline) {
    const t0 = performance.now();
    await livez(job.port);
    out.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, job.intervalMs));
  }
  return out;
}

/** The probe's latencies, measured on a worker thread until `deadline`. */
export function probeLivez(port: number, deadline: number, intervalMs = 50): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { port, deadline, intervalMs } satisfies Job });
    worker.once('message', (m: number[]) => resolve(m));
    worker.once('error', reject);
  });
}

if (!isMainThread && parentPort !== null) parentPort.postMessage(await run(workerData as Job));
