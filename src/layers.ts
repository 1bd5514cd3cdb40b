/**
 * The layers of `src/`, lowest first. A module may import its own layer and the layers below
 * it, never one above: the flow of DESIGN.md reads bottom-up (bytes → parsed message →
 * document → preview → ledger → API → batches → store → pipeline → sinks) and the entry points
 * (runtime, service, CLI) sit on top. Adapters (adapters/<kind>/) may import `src/` up to
 * `pipeline` (the Adapter contract, errors, logger, limits, mime…) and never each other; `src/`
 * reaches them only through the registry (adapters/index.ts, adapters/config.ts).
 * test/core/architecture.test.ts checks every import against this list.
 */
export const LAYERS: ReadonlyArray<readonly string[]> = [
  ['layers', 'package-root', 'model', 'limits', 'errors', 'line-safe', 'logger', 'log-pretty', 'prng', 'retry', 'net', 'tokens', 'pids'],
  ['mime'],
  // Mailbox controls shared by every pull kind: filters over the header block, start time, state vocabulary.
  ['controls'],
  ['document'],
  ['preview'],
  // The billing ledger: its contract, hashes and rule, shared by intake, the batcher and the store.
  ['ledger'],
  ['api'],
  ['batcher'],
  ['store'],
  // The configuration schema: routes and the adapters' entries (adapters/config.ts); the error
  // catalogue, the core's codes and the kinds' assembled by the same registry.
  ['config', 'error-catalogue'],
  // Intake, delivery, the parse pool, after-delivery; the Adapter contract (pipeline/types.ts).
  ['pipeline'],
  // Where predictions go besides the store: JSONL files and webhooks.
  ['sinks'],
  // The HTTP server (probes, metrics, admin API, preview, push endpoints) and its metrics.
  ['server', 'metrics'],
  // The built-in stand-in for the Text Analytics API.
  ['emulator'],
  // store + API + pool + intake + delivery + sinks + adapters, wired once.
  ['runtime'],
  ['service'],
  ['cli', 'index'],
];

/** The highest layer adapters may import. */
export const ADAPTER_CEILING = 'pipeline';

/** The layer rank of a `src/` module path such as `pipeline/intake.ts` or `limits.ts`; -1 when unknown. */
export function layerOf(srcPath: string): number {
  const top = srcPath.split('/')[0]!.replace(/\.ts$/, '');
  return LAYERS.findIndex((layer) => layer.includes(top));
}
