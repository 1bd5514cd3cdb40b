/** Every `mailgate` command, in help order. Adding one is a file in this folder and a line here. */
import type { CliCommand } from '../types.js';
import { emulatorCommand } from './emulator.js';
import { previewCommand } from './preview.js';
import { serveCommand } from './serve.js';
import { importCommand } from './import.js';

export const COMMANDS: readonly CliCommand[] = [previewCommand, importCommand, emulatorCommand, serveCommand];
