/** The Gmail stand-in (server.ts) and what tests and benchmarks fill it with. */
export { GmailStandIn, startGmailStandIn, type GmailStandInOptions } from './server.js';
export { sampleMessage, buildMessage, type AttachmentSpec, type MessageSpec } from './message.js';
export type { UserStats } from './meter.js';
