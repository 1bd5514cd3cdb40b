/** The upload API adapter: messages posted over HTTP (.eml, mbox, Outlook .msg, multipart). */
export { createUploadAdapter, UploadAdapter } from './adapter.js';
export { uploadConfigSchema, type UploadConfig } from './config.js';
