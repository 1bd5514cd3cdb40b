/** The upload API adapter: messages posted over HTTP (.eml, mbox, Outlook .msg, multipart). */
import type { KindImplementation } from '../../src/pipeline/kind.js';
import type { Adapter, AdapterContext } from '../../src/pipeline/types.js';
import { createUploadAdapter } from './adapter.js';
import type { UploadConfig } from './config.js';

export { createUploadAdapter, UploadAdapter } from './adapter.js';
export { uploadConfigSchema, type UploadConfig } from './config.js';

/** The factory of one entry of `adapters.upload[]`. */
export function create(entry: UploadConfig, ctx: AdapterContext): Adapter {
  return createUploadAdapter(entry, { logger: ctx.logger });
}

/** The kind's implementation (adapters/upload/kind.ts). */
export const implementation: KindImplementation<UploadConfig> = { create };
