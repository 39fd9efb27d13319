// `npm publish` runs this first (prepublishOnly; never on install): the package may not reach a registry
// while package.json's repository is the placeholder, because a registry page and a construct catalog
// resolve the README's relative links against that URL. Set the real repository URL, then publish.
import { readFileSync } from 'node:fs';
import { URL } from 'node:url';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const url = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
if (!url || /example\.invalid/.test(url)) {
  console.error(
    `prepublish: package.json's repository is ${url ? `the placeholder ${url}` : 'missing'}: a registry would link the README's docs/ ` +
      'pages there. Set repository.url to the real repository (jsii needs the field too), then run npm publish again.',
  );
  process.exit(1);
}
