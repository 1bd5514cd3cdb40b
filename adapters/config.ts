/**
 * The kinds as the configuration sees them: their definitions (adapters/kinds.ts, one line a
 * kind) without their implementations, so that the configuration is read (and `mailgate --help`
 * runs) without loading an IMAP client. src/config/schema.ts builds `adapters:` from `KINDS`;
 * the error catalogue joins the kinds' codes to the core's; adapters/index.ts loads the
 * implementations.
 */
import type { KindDefinition } from '../src/config/kind.js';
import { assembleCatalogue, type ErrorCatalogue } from '../src/errors.js';
import * as kinds from './kinds.js';

/** Every kind's definition by its name, in the order of the names (a module namespace's keys are, natively). */
export const KINDS = Object.fromEntries(
  Object.keys(kinds)
    .sort()
    .map((k) => [k, kinds[k as keyof typeof kinds]]),
) as {
  readonly [K in keyof typeof kinds]: (typeof kinds)[K];
} satisfies Record<string, KindDefinition>;

export type AdapterKind = keyof typeof KINDS;
export const ADAPTER_KINDS = Object.keys(KINDS) as AdapterKind[];

/** The kinds that offer a capability, by name. */
export function kindsWith(capability: 'fileInputs' | 'simulate' | 'standIn'): AdapterKind[] {
  return ADAPTER_KINDS.filter((kind) => (KINDS[kind] as KindDefinition)[capability] !== undefined);
}

/** The kind whose messages name `adapter` in their origin (`imap`; `webhook:<provider>` is the webhooks kind's), if any. */
export function kindOfOrigin(adapter: string): KindDefinition | undefined {
  const name = adapter.split(':')[0];
  return ADAPTER_KINDS.map((kind): KindDefinition => KINDS[kind]).find((def) => (def.originAdapter ?? def.kind) === name);
}

/** Every error code: the core's and each kind's, with their HTTP and SMTP answers (docs/errors.md). */
export function errorCatalogue(): ErrorCatalogue {
  return assembleCatalogue(ADAPTER_KINDS.map((kind) => ({ owner: `adapters/${kind}`, errors: KINDS[kind].errors })));
}
