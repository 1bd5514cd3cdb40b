/**
 * What the server falls back to when built without a full `server:` section (tests, the
 * emulator's listener): the schema's own defaults, so each is declared once, in the schema.
 */
import { ServerSchema } from '../config/schema.js';

export const SERVER_DEFAULTS = ServerSchema.parse({});
