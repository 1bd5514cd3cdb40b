/**
 * The one schema of mailgate.yaml with every adapter kind's entries (sections.ts declares it):
 * what docs/config.md is generated from and what loadConfig validates with. Loading this module
 * loads every kind's entry schema; load-named.ts builds the schema of only the kinds a
 * configuration names.
 */
import { ADAPTER_KINDS } from '../../adapters/config.js';
import { adaptersSchemaWith, configSchemaWith, entrySchemas } from './sections.js';

export * from './sections.js';

const ENTRY_SCHEMAS = await entrySchemas(ADAPTER_KINDS);

/** Every adapter kind with its own schema, validated together with the rest of the file. */
export const AdaptersSchema = adaptersSchemaWith(ENTRY_SCHEMAS);

export const ConfigSchema = configSchemaWith(ENTRY_SCHEMAS);
