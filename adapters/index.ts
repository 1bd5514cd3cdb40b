/**
 * The adapter registry: the kinds' definitions (adapters/kinds.ts, one line a kind) with their
 * implementations and capabilities, loaded on first use so that reading the configuration (and
 * `mailgate --help`) never loads an IMAP client. `src/` reaches a concrete adapter only through
 * here, and asks for a capability (file inputs, a simulator), never for a kind by name.
 */
import type { z } from 'zod';
import type {
  FileInputsModule,
  KindContext,
  KindImplementation,
  RunningStandIn,
  SimulatorModule,
  StandInModule,
} from '../src/pipeline/kind.js';
import { processPacer } from '../src/pipeline/pacer.js';
import { backoffDelay } from '../src/retry.js';
import { createTokenCache } from '../src/tokens.js';
import { createWakeBoard } from '../src/pipeline/wake-board.js';
import type { Adapter, AdapterContext, AdapterMode, PathInputs } from '../src/pipeline/types.js';
import { ADAPTER_KINDS, KINDS, kindsWith, type AdapterKind } from './config.js';

export { ADAPTER_KINDS, KINDS, type AdapterKind };
export type AdapterEntryOf<K extends AdapterKind> = z.output<Awaited<ReturnType<(typeof KINDS)[K]['schema']>>>;

/**
 * Every kind's loaders held to the pipeline's contract: a definition whose implementation or
 * capability does not fit fails to compile here, naming the kind.
 */
type Loaders = {
  readonly [K in AdapterKind]: {
    load(): Promise<{ implementation: KindImplementation<AdapterEntryOf<K>> }>;
    fileInputs?(): Promise<FileInputsModule>;
    simulate?(): Promise<SimulatorModule>;
    standIn?(): Promise<StandInModule>;
  };
};
const LOADERS: Loaders = KINDS;

/** A kind, its mode and schema, and its factory, loaded by this call. */
export interface AdapterDefinition<E = unknown> {
  kind: string;
  mode: AdapterMode;
  schema: z.ZodType;
  /** One adapter, or one per mailbox of the entry (each under its own lease). */
  create(entry: E, ctx: AdapterContext): Adapter | Adapter[];
}

export function isAdapterKind(kind: string): kind is AdapterKind {
  return Object.hasOwn(KINDS, kind);
}

/** The shared services handed to a kind's factory with the caller's context (src/pipeline/kind.ts). */
function withServices(kind: string, entry: unknown, ctx: AdapterContext): KindContext {
  const name = (entry as { name?: unknown }).name;
  return {
    ...ctx,
    log: ctx.logger.child({ adapter: kind, ...(typeof name === 'string' && { instance: name }) }),
    pacer: processPacer(),
    backoff: backoffDelay,
    tokenCache: createTokenCache,
    ...(ctx.checkpoints && { wakeBoard: createWakeBoard(ctx.checkpoints) }),
  };
}

/** The definition of a kind; its implementation is loaded by this call. */
export async function adapterDefinition<K extends AdapterKind>(kind: K): Promise<AdapterDefinition<AdapterEntryOf<K>>> {
  const { implementation } = await LOADERS[kind].load();
  const { mode } = KINDS[kind];
  const schema = await KINDS[kind].schema();
  return { kind, mode, schema, create: (entry, ctx) => implementation.create(entry, withServices(kind, entry, ctx)) };
}

/** The one adapter of a configuration entry of a kind that makes one per entry. */
export async function createAdapter<K extends AdapterKind>(kind: K, entry: AdapterEntryOf<K>, ctx: AdapterContext): Promise<Adapter> {
  const made = await createAdapters(kind, entry, ctx);
  if (made.length !== 1) throw new Error(`adapters.${kind}: this entry makes ${made.length} adapters; use createAdapters`);
  return made[0]!;
}

/**
 * The adapters of a configuration entry (`adapters.<kind>[i]`, already validated): one, or one
 * per mailbox where an entry names several (Graph), so that each runs under its own lease.
 */
export async function createAdapters<K extends AdapterKind>(kind: K, entry: AdapterEntryOf<K>, ctx: AdapterContext): Promise<Adapter[]> {
  const made = (await adapterDefinition(kind)).create(entry, ctx);
  return Array.isArray(made) ? made : [made];
}

/** The one kind offering a capability; a registry with none or several is a programming error. */
function onlyKindWith(capability: 'fileInputs' | 'simulate'): AdapterKind {
  const found = kindsWith(capability);
  if (found.length !== 1) throw new Error(`exactly one adapter kind must offer "${capability}"; found ${found.join(', ') || 'none'}`);
  return found[0]!;
}

/** The kind that reads files and folders named on the command line (`mailgate import`, `preview`), and its reader. */
export async function fileInputs(): Promise<{ kind: AdapterKind; inputs: PathInputs }> {
  const kind = onlyKindWith('fileInputs');
  return { kind, inputs: (await LOADERS[kind].fileInputs!()).fileInputs };
}

/** The kind whose requests the CLI can simulate, and its simulator. */
export async function simulator(): Promise<{ kind: AdapterKind } & SimulatorModule> {
  const kind = onlyKindWith('simulate');
  return { kind, simulator: (await LOADERS[kind].simulate!()).simulator };
}

/** The kinds that offer a local stand-in of the service they read (`mailgate emulator --stand-in <kind>`). */
export function standInKinds(): AdapterKind[] {
  return kindsWith('standIn');
}

/** Starts the stand-in of `kind` (one of standInKinds()). */
export async function startStandIn(kind: AdapterKind, options: { host: string; print: (line: string) => void }): Promise<RunningStandIn> {
  const load = LOADERS[kind].standIn;
  if (load === undefined) throw new Error(`adapters.${kind} offers no stand-in`);
  return (await load()).standIn.start(options);
}
