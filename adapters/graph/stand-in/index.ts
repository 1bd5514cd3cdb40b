/** The Graph stand-in (server.ts) and what tests and benchmarks fill it with. */
export { GraphStandIn, startGraphStandIn, type GraphStandInOptions } from './server.js';
export { sampleMessage, type AttachmentSpec, type MessageSpec } from './message.js';
export type { MailboxStats } from './meter.js';
