/**
 * What a kind's implementation and its capabilities hand the core (the loaders of a kind's
 * definition, src/config/kind.ts, resolve to these; adapters/index.ts holds each kind to them).
 */
import type { Logger } from '../logger.js';
import type { Envelope } from '../model/origin.js';
import type { backoffDelay } from '../retry.js';
import type { createTokenCache } from '../tokens.js';
import type { ConnectionPacer } from './pacer.js';
import type { Adapter, AdapterContext, PathInputs } from './types.js';
import type { WakeBoard } from './wake-board.js';

/**
 * The services the runtime hands every kind's factory (through the registry), so that no kind
 * imports them from another: one process-wide pacer, backoff, token caching, and a logger that
 * names the kind and the entry.
 */
export interface KindServices {
  /** A child of the service's logger naming the kind and the entry: `{ adapter, instance }`. */
  log: Logger;
  /** The process-wide pacer of connection starts and retries (src/pipeline/pacer.ts), shared by every pull kind. */
  pacer: ConnectionPacer;
  /** Jittered exponential backoff with a cap (src/retry.ts). */
  backoff: typeof backoffDelay;
  /** A cache around an OAuth kind's token fetch: renewed ahead of expiry, one fetch in flight (src/tokens.ts). */
  tokenCache: typeof createTokenCache;
  /** Wake-ups of a mailbox read by another replica, through the store (src/pipeline/wake-board.ts); absent without a store. */
  wakeBoard?: WakeBoard;
}

/** What a kind's factory gets besides its entry: the caller's context and the shared services. */
export type KindContext = AdapterContext & KindServices;

/** `load()` of a kind: `{ implementation }`. */
export interface KindImplementation<E = never> {
  /** One adapter, or one per mailbox of the entry (each under its own lease). The entry is validated by the kind's schema. */
  create(entry: E, ctx: KindContext): Adapter | Adapter[];
}

/** `fileInputs()` of a kind: the reader of files and folders named on the command line (`import`, `preview`). */
export interface FileInputsModule {
  fileInputs: PathInputs;
}

/** A request built as the kind's senders would build it. */
export interface SimulatedRequest {
  method: 'POST';
  headers: Record<string, string>;
  body: Buffer;
}

/** Secrets given as command-line flags; each variant (provider) takes the ones it signs with. */
export interface SimulationSecrets {
  signingKey?: string;
  basicAuth?: { user: string; pass: string };
  token?: string;
  hmacSecret?: string;
  bearer?: string;
  /** A PEM private key that signs (its public key goes in the entry). */
  privateKeyPem?: string;
}

export interface SimulateOptions {
  url: string;
  /** Unix milliseconds. */
  now: number;
  envelope?: Envelope;
  privateKeyPem?: string;
}

/** `simulate()` of a kind: `mailgate <command> simulate <variant> FILE --url URL`. */
export interface Simulator {
  /** The CLI command it hangs under (`webhook`). */
  readonly command: string;
  /** The variants a request can be built for (providers). */
  readonly variants: readonly string[];
  /** An entry of the kind for `variant` from flags; an error names the missing flag. */
  entryFromSecrets(variant: string, secrets: SimulationSecrets, url: string): unknown;
  /** The variant a configured (validated) entry is of. */
  variantOf(entry: unknown): string;
  /** The request the entry's sender would send for `raw`. */
  request(entry: unknown, raw: Buffer, options: SimulateOptions): SimulatedRequest;
}

export interface SimulatorModule {
  simulator: Simulator;
}

/** A stand-in running beside the emulator: where it listens, and how to stop it. */
export interface RunningStandIn {
  url: string;
  close(): Promise<void>;
}

/** `standIn()` of a kind: a local stand-in for the service the kind reads, seeded with sample mail. */
export interface StandIn {
  /** Listens on `host` (a free port), fills itself with sample mail and prints how to point an entry of the kind at it. */
  start(options: { host: string; print: (line: string) => void }): Promise<RunningStandIn>;
}

export interface StandInModule {
  standIn: StandIn;
}
