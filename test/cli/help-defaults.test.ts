/**
 * The defaults the CLI's help states are the ones in force: each is read from its one
 * declaration (the configuration schema, src/limits.ts, the emulator's options). A help text
 * that states a number after "default" must be listed here with the value it has to show, so a
 * new option cannot state a default of its own either.
 */
import { PassThrough } from 'node:stream';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { loadCommands } from '../../src/cli/commands/index.js';
import { buildProgram } from '../../src/cli/program.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { DEFAULT_BODY_LIMIT, DEFAULT_LIVE_VERSION, DEFAULT_MODEL_VERSIONS, DEFAULT_STAGING_VERSION } from '../../src/emulator/options.js';
import { CLAIM_LEASE_MS, DEFAULT_TRANSFORM_TAG, MAX_PREDICT_DOCUMENTS, MAX_SYNC_DOCUMENTS } from '../../src/limits.js';

/** What a configuration without the setting gets, parsed here rather than read from src/config/defaults.ts. */
const parsed = ConfigSchema.parse({});

/** `<command> <flag>` → the default its help must state. */
const EXPECTED: Record<string, string> = {
  'serve --drain-ms': `default ${parsed.delivery.drain_ms}`,
  'serve --lease-ms': `default ${CLAIM_LEASE_MS}`,
  'import --lease-ms': `default ${CLAIM_LEASE_MS}`,
  'import --batch-size': `default: delivery.max_documents, ${parsed.delivery.max_documents}`,
  'emulator --transform-tag': `default ${DEFAULT_TRANSFORM_TAG}`,
  'emulator --max-sync-documents': `default ${MAX_SYNC_DOCUMENTS}`,
  'emulator --max-predict-documents': `default ${MAX_PREDICT_DOCUMENTS}`,
  'emulator --model-versions': `default ${DEFAULT_MODEL_VERSIONS}`,
  'emulator --live-version': `default ${DEFAULT_LIVE_VERSION}`,
  'emulator --staging-version': `default ${DEFAULT_STAGING_VERSION}`,
  'emulator --body-limit': `default ${DEFAULT_BODY_LIMIT / 2 ** 20} MiB`,
  // The HTTP status the emulator answers without the flag, not a declared default.
  'emulator --allow-no-charge': 'default: 403',
  'emulator --auto-create-sources': 'default: 404',
  // A rule in words, as parsing.workers says it (the pool counts the cores when it starts).
  'import --workers': 'default: one fewer than the cores, at least 1',
  'preview --workers': 'default: one fewer than the cores, at least 1',
};

/** Every option of every command (sub-commands included) as `<command path> <flag>` → its help text. */
function optionHelp(command: Command, path: string[] = []): Map<string, string> {
  const out = new Map<string, string>();
  for (const option of command.options) out.set(`${path.join(' ')} ${option.long ?? option.short ?? ''}`, option.description);
  for (const sub of command.commands) for (const [k, v] of optionHelp(sub, [...path, sub.name()])) out.set(k, v);
  return out;
}

const program = buildProgram({ stdout: new PassThrough(), stderr: new PassThrough(), exitCode: 0 }, await loadCommands());
const help = optionHelp(program);

describe('defaults stated in the CLI help', () => {
  it.each(Object.entries(EXPECTED))('%s states %s', (key, stated) => {
    expect(help.get(key), `no option ${key}`).toBeDefined();
    expect(help.get(key)).toContain(stated);
  });

  it('every --store states the configuration default of `store`', () => {
    const stores = [...help].filter(([k]) => k.endsWith(' --store'));
    expect(stores.length).toBeGreaterThan(5);
    for (const [key, text] of stores) expect(text, key).toContain(`(default ${parsed.store})`);
  });

  it('no other option states a number as its default', () => {
    const numeric = [...help].filter(([k, text]) => !(k in EXPECTED) && /default[^;)]*\d/i.test(text) && !k.endsWith(' --store'));
    expect(numeric).toEqual([]);
  });
});
