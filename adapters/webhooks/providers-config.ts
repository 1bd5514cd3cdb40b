/**
 * Every webhook provider as the configuration sees it, one line each (its folder's config.ts).
 * A new provider is a folder, one line here and one in providers.ts (its module; the compiler
 * asks for it).
 */
export { provider as sendgrid } from './sendgrid/config.js';
export { provider as mailgun } from './mailgun/config.js';
export { provider as postmark } from './postmark/config.js';
export { provider as ses } from './ses/config.js';
export { provider as mandrill } from './mandrill/config.js';
export { provider as sparkpost } from './sparkpost/config.js';
export { provider as raw } from './raw/config.js';
