/**
 * Every kind of adapter, one line each: its definition lives in its folder (adapters/<kind>/kind.ts).
 * A new kind is a folder and one line here. The configuration, the error catalogue and the CLI
 * read the kinds from here (adapters/config.ts); the runtime loads their implementations through
 * adapters/index.ts.
 */
export { kind as files } from './files/kind.js';
export { kind as imap } from './imap/kind.js';
export { kind as graph } from './graph/kind.js';
export { kind as gmail } from './gmail/kind.js';
export { kind as webhooks } from './webhooks/kind.js';
export { kind as upload } from './upload/kind.js';
export { kind as smtp } from './smtp/kind.js';
