// Bundles each Lambda in lambda/<name>/handler.ts into dist/lambda-bundles/<name>/index.js with
// esbuild (minified, tree-shaken), so the library ships built code and consumers never bundle.
// The AWS SDK v3 clients the function uses are bundled in, from their ES module builds (which esbuild
// can tree-shake: `mainFields`), not taken from the Lambda runtime: the runtime's copy is whatever
// version AWS last installed, not the one these tests ran against, and loading it from its
// node_modules is the slower cold start (AWS's "Reduce Lambda cold start times: migrate to AWS SDK for
// JavaScript v3" recommends bundling it; aws/aws-cdk#25492, by the SDK's maintainer, gives the reason:
// module resolution across hundreds of files). Measured by `npm run bench` ("breaker module load").
import { build } from 'esbuild';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lambdaDir = join(root, 'lambda');
const names = existsSync(lambdaDir)
  ? readdirSync(lambdaDir).filter(n => statSync(join(lambdaDir, n)).isDirectory() && existsSync(join(lambdaDir, n, 'handler.ts')))
  : [];
/**
 * The notices of the packages esbuild put in a bundle, from its metafile: each package's name, version and
 * license, then each license text once with the packages it covers. The bundled packages are MIT and
 * Apache-2.0 licensed, and both licenses ask that copies of the code carry their notice. A bundled
 * package without a license file stops the build: someone must look at it.
 */
function thirdPartyNotices(metafile, bundle) {
  const dirs = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input); // the innermost package of a nested node_modules
    if (m) dirs.add(m[1]);
  }
  const packages = [...dirs]
    .map(dir => {
      const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
      const files = readdirSync(join(root, dir));
      const license = files.find(f => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
      const notice = files.find(f => /^notice(\.(md|txt))?$/i.test(f));
      const read = f => readFileSync(join(root, dir, f), 'utf8').trim();
      const repository = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
      return {
        id: `${pkg.name}@${pkg.version}`,
        dir,
        license: pkg.license,
        repository,
        text: license && read(license),
        notice: notice && read(notice),
      };
    })
    .sort((a, b) => a.id.localeCompare(b.id));
  // A few of the SDK's packages publish no license file (@aws-sdk/credential-provider-http): their
  // repository's license, as another package of that repository with the same license id carries it.
  for (const p of packages.filter(q => !q.text)) {
    p.text = packages.find(q => q.text && q.repository && q.repository === p.repository && q.license === p.license)?.text;
    if (!p.text) throw new Error(`${p.id} (${p.dir}) is bundled into ${bundle} but has no license file`);
  }
  // Each text once (texts that differ only in white space are one), with the packages it covers.
  const texts = new Map();
  for (const p of packages) {
    for (const t of [p.text, p.notice].filter(Boolean)) {
      const key = t.replace(/\s+/g, ' ');
      texts.set(key, { text: texts.get(key)?.text ?? t, ids: [...(texts.get(key)?.ids ?? []), p.id] });
    }
  }
  return [
    `${bundle} contains code of these packages (name@version, license):`,
    ...packages.map(p => `  ${p.id} (${p.license})`),
    ...[...texts.values()].map(({ text, ids }) => `\n${'='.repeat(78)}\n${ids.join(', ')}:\n\n${text}`),
    '',
  ].join('\n');
}

/** esbuild's options for every bundle: one minified, tree-shaken CommonJS file with its SDK clients from their ES module builds. */
const COMMON = {
  bundle: true,
  absWorkingDir: root, // the metafile's paths are relative to it (thirdPartyNotices reads them)
  minify: true,
  treeShaking: true,
  platform: 'node',
  format: 'cjs',
  mainFields: ['module', 'main'],
  metafile: true,
  logLevel: 'warning',
};

for (const name of names) {
  const outfile = join(root, 'dist', 'lambda-bundles', name, 'index.js');
  const result = await build({
    entryPoints: [join(lambdaDir, name, 'handler.ts')],
    outfile,
    ...COMMON,
    target: 'node22',
  });
  // esbuild's metafile (inputs and sizes, for bundle analysis) goes beside the bundle's folder, not in
  // it: that folder is the function's asset, whose hash must change only when the code does.
  mkdirSync(join(root, 'dist', 'lambda-meta'), { recursive: true });
  writeFileSync(join(root, 'dist', 'lambda-meta', `${name}.json`), JSON.stringify(result.metafile));
  rmSync(join(root, 'dist', 'lambda-bundles', name, 'meta.json'), { force: true });
  // The notices go in the asset, beside the code they are about (they change its hash only when a package does).
  writeFileSync(join(dirname(outfile), 'THIRD-PARTY-NOTICES.txt'), thirdPartyNotices(result.metafile, `lambda-bundles/${name}/index.js`));
  console.log(`bundled lambda/${name} -> ${outfile.replace(root + '/', '')} (${statSync(outfile).size} bytes)`);
}

// The operator commands (doctor, drill) run on the user's machine, where no AWS SDK is installed: the
// SDK clients they use are bundled in, from their ES module builds (tree-shaken, as the function's).
{
  const outfile = join(root, 'dist', 'cli-bundles', 'ops.js');
  const result = await build({
    entryPoints: [join(root, 'bin', 'ops', 'index.ts')],
    outfile,
    ...COMMON,
    target: 'node20',
  });
  writeFileSync(join(dirname(outfile), 'THIRD-PARTY-NOTICES.txt'), thirdPartyNotices(result.metafile, 'cli-bundles/ops.js'));
  console.log(`bundled bin/ops -> ${outfile.replace(root + '/', '')} (${statSync(outfile).size} bytes)`);
}
