/**
 * The definition of a kind of adapter: one object in its folder (adapters/<kind>/kind.ts) and
 * one line in adapters/kinds.ts. It says what the configuration, the error catalogue and the
 * CLI need to know without loading the implementation (`mailgate --help` loads no IMAP
 * client): the kind's name, pull or push, the schema of one entry, its error codes with their
 * answers, and loaders for the schema, the implementation and each optional capability. The loaders'
 * results are held to the pipeline's contract (src/pipeline/kind.ts) by the registry
 * (adapters/index.ts); this side sits in the configuration layer, below the pipeline.
 */
import type { z } from 'zod';
import type { ErrorDefs } from '../errors.js';
import type { OriginDetails, OriginDisplay } from '../model/origin.js';

export interface KindDefinition<S extends z.ZodType = z.ZodType> {
  /** The key under `adapters:` in the configuration, the `adapter` of its messages' origin. */
  readonly kind: string;
  /** `pull`: reads a source it owns (checkpoints, leases); `push`: messages are handed to it. */
  readonly mode: 'pull' | 'push';
  /**
   * The zod schema of one entry under `adapters.<kind>[]` (options validated and defaulted once,
   * there), from the kind's config module: loaded, and built, on first use, so that a command that
   * only names the kinds (the help) builds no schema. src/config/schema.ts loads every kind's.
   */
  schema(): Promise<S>;
  /** Shown for `adapters.<kind>` in docs/config.md. */
  readonly description: string;
  /** The kind's own error codes with their HTTP/SMTP answers (adapters/<kind>/errors.ts). */
  readonly errors: ErrorDefs;
  /** A rule across the kind's entries (unique names): the first offending entry, or undefined. */
  unique?(entries: ReadonlyArray<{ name: string }>): { index: number; message: string } | undefined;
  /** Routes an entry names besides `route` (SMTP recipients), each checked against the routes. The entry may be invalid. */
  routes?(entry: Record<string, unknown>): Array<{ path: Array<string | number>; route: unknown }>;
  /**
   * Capability: a gauge of its own for its adapters' health lines besides mailgate_adapter_state
   * (a name dashboards know): metric name, HELP text, the label that names the line, and the
   * states to report as 0 before they are seen.
   */
  readonly health?: { metric: string; help: string; instanceLabel: string; states?: readonly string[] };
  /**
   * The `adapter` its messages' origins name when that is not `kind`, alone or before a colon and
   * a variant (webhooks: `webhook`, for `webhook:<provider>`).
   */
  readonly originAdapter?: string;
  /**
   * Capability: how the console, `mailgate dlq` and the item view show the details of its
   * messages' origins (the core stores them and never reads them): a short summary for a table
   * cell and labelled lines (`detailLines` builds them). Without it, each detail is shown under
   * its own name.
   */
  showOrigin?(details: Readonly<OriginDetails>): OriginDisplay;
  /** The implementation: `{ implementation: KindImplementation }` (src/pipeline/kind.ts), loaded on first use. */
  load(): Promise<unknown>;
  /** Capability: reads files and folders named on the command line (`import`, `preview`); `{ fileInputs: PathInputs }`. */
  fileInputs?(): Promise<unknown>;
  /** Capability: builds requests as the kind's senders would (`mailgate <command> simulate`); `{ simulator: Simulator }`. */
  simulate?(): Promise<unknown>;
  /**
   * Capability: a local stand-in for the remote service the kind reads (to try it without an
   * account), started beside the API emulator by `mailgate emulator --stand-in <kind>`; `{ standIn: StandIn }`.
   */
  standIn?(): Promise<unknown>;
}

/** Holds a definition to the contract, keeping its literal kind, mode and schema types. */
export function defineKind<const S extends z.ZodType, const D extends KindDefinition<S>>(definition: D & { schema(): Promise<S> }): D {
  return Object.freeze(definition);
}

/** `unique` for kinds whose entries are told apart by `name`: the first entry whose name an earlier one has. */
export function uniqueNames(kind: string) {
  return (entries: ReadonlyArray<{ name: string }>): { index: number; message: string } | undefined => {
    const seen = new Map<string, number>();
    for (const [index, e] of entries.entries()) {
      const first = seen.get(e.name);
      if (first !== undefined)
        return { index, message: `name "${e.name}" is already used by adapters.${kind}[${first}]; give each entry its own name` };
      seen.set(e.name, index);
    }
    return undefined;
  };
}

/** The first entry whose name an earlier one has, or a mailbox listed twice in one entry. */
export function uniqueMailboxEntries(kind: string) {
  const names = uniqueNames(kind);
  return (
    entries: ReadonlyArray<{ name: string; mailboxes?: ReadonlyArray<{ user: string }> }>,
  ): { index: number; message: string } | undefined => {
    const named = names(entries);
    for (const [index, e] of entries.entries()) {
      if (named !== undefined && named.index === index) return named;
      const users = (e.mailboxes ?? []).map((m) => m.user.toLowerCase());
      const twice = users.find((u, i) => users.indexOf(u) !== i);
      if (twice !== undefined) return { index, message: `mailbox ${twice} is listed twice; list each mailbox once` };
    }
    return named;
  };
}
