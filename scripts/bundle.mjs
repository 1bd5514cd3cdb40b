// The `mailgate` executable as a bundle (`npm run build` runs this after tsc): dist/cli/ holds
// the CLI (mailgate.js) and the entry points of its worker threads (worker.js, pst-worker.js,
// msg-worker.js), built by rolldown from the compiled modules in dist/src/ together with the
// dependencies they import. A command then loads a few files instead of some 400 modules (about
// 100 ms of CPU at each start). A dynamic import() stays a chunk of its own, loaded on first use,
// as in dist/src/. All files sit in one folder, so that `new URL('./worker.js', import.meta.url)`
// of any chunk names the worker's bundle, as it names the compiled worker beside pool.js in
// dist/src/. The library (package.json `exports`) stays the unbundled dist/src/.
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = `${ROOT}dist/cli`;

rmSync(OUT, { recursive: true, force: true });
await build({
  cwd: ROOT,
  input: {
    mailgate: 'dist/src/cli/main.js',
    worker: 'dist/src/pipeline/worker.js',
    'pst-worker': 'dist/src/mime/pst-worker.js',
    'msg-worker': 'dist/src/mime/msg-worker.js',
  },
  platform: 'node',
  // A native module finds its compiled library from its own folder: it stays in node_modules.
  external: ['better-sqlite3'],
  logLevel: 'warn',
  // A warning fails the build: an import it could not resolve would be left to fail at run time.
  onLog(level, log, handler) {
    handler(level === 'warn' ? 'error' : level, log);
  },
  output: {
    dir: OUT,
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: '[name]-[hash].js',
    // The tests read which modules a loaded chunk holds from its map; --enable-source-maps uses them too.
    sourcemap: true,
    sourcemapExcludeSources: true,
  },
});
