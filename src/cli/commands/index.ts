/** Every `mailgate` command, in help order. Adding one is a file in this folder and a line here. */
import type { CliCommand } from '../types.js';
import { emulatorCommand } from './emulator.js';
import { previewCommand } from './preview.js';
import { serveCommand } from './serve.js';
import { importCommand } from './import.js';
import { dlqCommand } from './dlq.js';
import { statusCommand } from './status.js';
import { mailboxesCommand, routesCommand } from './mailboxes.js';
import { predictionsCommand } from './predictions.js';
import { uploadCommand } from './upload.js';
import { webhookCommand } from './webhook.js';
import { backupCommand } from './backup.js';
import { compactCommand } from './compact.js';

export const COMMANDS: readonly CliCommand[] = [
  previewCommand,
  importCommand,
  dlqCommand,
  predictionsCommand,
  statusCommand,
  mailboxesCommand,
  routesCommand,
  backupCommand,
  compactCommand,
  emulatorCommand,
  serveCommand,
  webhookCommand,
  uploadCommand,
];
