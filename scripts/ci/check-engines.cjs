// Run inside the image (`node check-engines.cjs DIR`): every package installed under DIR/node_modules
// accepts this Node in its `engines.node`, so npm would warn EBADENGINE for none of them. Uses the
// semver of the npm that comes with the image's Node.
const { existsSync, readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const semver = require(join(process.execPath, '../../lib/node_modules/npm/node_modules/semver'));

const unmet = [];
let count = 0;
function walk(dir) {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.')) continue;
    if (name.startsWith('@')) {
      walk(join(dir, name));
      continue;
    }
    const manifest = join(dir, name, 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
    count += 1;
    const range = pkg.engines?.node;
    if (range && !semver.satisfies(process.version, range))
      unmet.push(`${pkg.name}@${pkg.version} wants node ${range}`);
    walk(join(dir, name, 'node_modules'));
  }
}
const root = process.argv[2] ?? '.';
walk(join(root, 'node_modules'));
const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
if (!semver.satisfies(process.version, own.engines.node))
  unmet.push(`${own.name} wants node ${own.engines.node}`);
for (const line of unmet) console.log(`  ${line}`);
console.log(`  ${count} packages checked against Node ${process.version}`);
process.exit(unmet.length === 0 ? 0 : 1);
