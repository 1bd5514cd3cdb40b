/**
 * Every `mailgate` command, in help order. Adding one is a file in this folder and a line here.
 * A command's module is loaded when the program needs it: a run of one command (`mailgate import
 * …`) loads that command's module only, not what the others import; the help loads them all.
 */
import type { CliCommand } from '../types.js';

/** Each command's name and how to load its module. */
const LOADERS: readonly (readonly [name: string, load: () => Promise<CliCommand>])[] = [
  ['preview', async () => (await import('./preview.js')).previewCommand],
  ['import', async () => (await import('./import.js')).importCommand],
  ['dlq', async () => (await import('./dlq.js')).dlqCommand],
  ['predictions', async () => (await import('./predictions.js')).predictionsCommand],
  ['status', async () => (await import('./status.js')).statusCommand],
  ['mailboxes', async () => (await import('./mailboxes.js')).mailboxesCommand],
  ['routes', async () => (await import('./mailboxes.js')).routesCommand],
  ['backup', async () => (await import('./backup.js')).backupCommand],
  ['compact', async () => (await import('./compact.js')).compactCommand],
  ['emulator', async () => (await import('./emulator.js')).emulatorCommand],
  ['serve', async () => (await import('./serve.js')).serveCommand],
  ['webhook', async () => (await import('./webhook.js')).webhookCommand],
  ['upload', async () => (await import('./upload.js')).uploadCommand],
];

/**
 * The commands a run needs: only `first` when it names a command (argv[2] of `mailgate <command> …`),
 * otherwise every command (the help, `mailgate help <command>`, an unknown command's suggestion).
 */
export async function loadCommands(first?: string): Promise<CliCommand[]> {
  const named = LOADERS.find(([name]) => name === first);
  return Promise.all((named === undefined ? LOADERS : [named]).map(([, load]) => load()));
}
