#!/usr/bin/env node
/**
 * The `mailgate` executable. It checks the Node.js version before it loads the program: on an
 * older Node the dependencies would fail on their own terms, so it says which Node is needed.
 * `mailgate --version` is answered here, before the program and its dependencies are loaded.
 */
import nodeModule from 'node:module';
import { EXIT_FAILED } from './exit-codes.js';
import { packageFacts, unsupportedNode } from './node-version.js';

const pkg = packageFacts();
const refusal = unsupportedNode(process.versions.node, pkg.nodeRange, process.execPath);
if (refusal !== undefined) {
  process.stderr.write(refusal);
  process.exitCode = EXIT_FAILED;
} else if (process.argv.length === 3 && (process.argv[2] === '--version' || process.argv[2] === '-V')) {
  // What the program's own `--version` prints (src/cli/program.ts), without loading it.
  process.stdout.write(`${pkg.version}\n`);
} else {
  // Node's on-disk compile cache (in the temporary directory; NODE_DISABLE_COMPILE_CACHE=1 turns it
  // off): from the second run on, the program's modules load without being compiled again, which
  // is most of a command's start. Nothing is lost when it cannot be written.
  nodeModule.enableCompileCache?.();
  // An import parses from its first message on: its parse worker loads its modules while this
  // thread loads the program's (the runtime's pool takes it as its first worker).
  if (process.argv[2] === 'import') (await import('../pipeline/pool.js')).startParseWorker();
  const { runCli } = await import('./program.js');

  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });

  runCli(process.argv, { stdout: process.stdout, stderr: process.stderr }, pkg.version).then(
    (code) => {
      process.exitCode = code;
    },
    async (err: unknown) => {
      // Loaded only for a failure: the redaction lives with the logger (and pino).
      const [{ isGatewayError }, { redactString }] = await Promise.all([import('../errors.js'), import('../logger.js')]);
      const text = isGatewayError(err) ? `${err.code}: ${err.message}` : err instanceof Error ? (err.stack ?? err.message) : String(err);
      // A connection string in an error (a store URL with ?password=) must not reach the terminal in clear.
      process.stderr.write(`mailgate: ${redactString(text)}\n`);
      process.exitCode = 1;
    },
  );
}
