/**
 * A closed-loop HTTP load generator for benchmarks: `concurrency` clients on keep-alive
 * connections, each sending its next request as soon as the previous answer arrived, until
 * `count` requests were sent. Records each request's time to its answer and the statuses.
 */
import { Agent, request } from 'node:http';

export interface LoadRequest {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

export interface LoadResult {
  /** Requests answered with a 2xx status. */
  ok: number;
  /** Count per non-2xx status (or `error` for a failed connection). */
  failed: Record<string, number>;
  seconds: number;
  /** Milliseconds from sending to the whole answer, of 2xx answers, sorted. */
  latencies: number[];
}

function send(agent: Agent, base: URL, req: LoadRequest): Promise<number> {
  return new Promise((resolve, reject) => {
    const r = request(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method: 'POST',
        path: req.path,
        headers: { ...req.headers, 'content-length': String(req.body.length) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}

/** Sends `count` requests made by `make(i)` to `url` with `concurrency` clients. */
export async function runLoad(url: string, count: number, concurrency: number, make: (i: number) => LoadRequest): Promise<LoadResult> {
  const base = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  const failed: Record<string, number> = {};
  let next = 0;
  let ok = 0;
  const started = performance.now();
  async function client(): Promise<void> {
    while (next < count) {
      const req = make(next++);
      const t0 = performance.now();
      try {
        const status = await send(agent, base, req);
        if (status >= 200 && status < 300) {
          ok++;
          latencies.push(performance.now() - t0);
        } else failed[String(status)] = (failed[String(status)] ?? 0) + 1;
      } catch {
        failed['error'] = (failed['error'] ?? 0) + 1;
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, client));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { ok, failed, seconds, latencies };
}

/** The q-quantile (0..1) of sorted values; NaN when there are none. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
