/**
 * A local stand-in for the Text Analytics API (docs/emulator.md): sources, sync-raw-emails,
 * predict-raw-emails with a toy model, comments and threads, fault injection and stats.
 */
export type { Emulator, EmulatorOptions, EmulatorStats, EndpointName, FaultRule } from './types.js';
export { createEmulator } from './emulator.js';
export { buildEmulatorApp } from './app.js';
export { parseFaultSpec } from './fault-spec.js';
export { EmulatorState } from './state.js';
export { resolveOptions } from './options.js';
export { runEmulatorCommand, type EmulatorCommandOptions, type RunningEmulator } from './command.js';
export { TAXONOMY } from './toy-model.js';
