// Refuses to go on (exit 1) on a Node.js older than package.json's engines.node, naming the Node
// that is needed: `npm test` runs it before the test runner, which would fail in its own way.
import { packageFacts, unsupportedNode } from '../dist/src/cli/node-version.js';

const refusal = unsupportedNode(process.versions.node, packageFacts().nodeRange, process.execPath);
if (refusal !== undefined) {
  process.stderr.write(refusal);
  process.exit(1);
}
