/**
 * Every configuration default, as the schema declares it: what a file without the setting gets.
 * Code that has to state or fall back on a default (the CLI's help, a library entry point) reads
 * it here, so each default is declared once, in the schema.
 */
import { ConfigSchema, type Config } from './schema.js';

export const CONFIG_DEFAULTS: Readonly<Config> = ConfigSchema.parse({});
