/** The files kind's capability: the files and folders named to `mailgate import` and `preview` (adapters/files/kind.ts). */
export { pathInputs as fileInputs } from './index.js';
