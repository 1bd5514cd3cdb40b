/**
 * The configuration defaults that the CLI's help states, each declared once, here: the schema
 * (schema.ts) takes them as its defaults, and a command states them without building the schema.
 * Plain values on purpose: a command's help (and `mailgate --help`) then loads no zod.
 * test/cli/help-defaults.test.ts holds the help to what the schema gives a file without them.
 */
import { DEFAULT_SYNC_DOCUMENTS } from '../limits.js';

/** `store`: the embedded SQLite file, relative to the working directory. */
export const DEFAULT_STORE_URL = 'sqlite:./data/mailgate.db';

/** `delivery.drain_ms`: how long `mailgate serve` keeps delivering on shutdown, in ms. */
export const DEFAULT_DRAIN_MS = 30_000;

/** `delivery.max_documents`: documents per API request. */
export const DEFAULT_MAX_DOCUMENTS = DEFAULT_SYNC_DOCUMENTS;
