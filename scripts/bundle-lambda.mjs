// Bundles each Lambda in lambda/<name>/handler.ts into dist/lambda-bundles/<name>/index.js with
// esbuild (minified, tree-shaken), so the library ships built code and consumers never bundle.
// The AWS SDK v3 clients the function uses are bundled in, from their ES module builds (which esbuild
// can tree-shake: `mainFields`), not taken from the Lambda runtime: the runtime's copy is whatever
// version AWS last installed, not the one these tests ran against, and loading it from its
// node_modules is the slower cold start (AWS's "Reduce Lambda cold start times: migrate to AWS SDK for
// JavaScript v3" recommends bundling it; aws/aws-cdk#25492, by the SDK's maintainer, gives the reason:
// module resolution across hundreds of files). Measured by `npm run bench` ("breaker module load").
import { build } from 'esbuild';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lambdaDir = join(root, 'lambda');
const names = existsSync(lambdaDir)
  ? readdirSync(lambdaDir).filter(n => statSync(join(lambdaDir, n)).isDirectory() && existsSync(join(lambdaDir, n, 'handler.ts')))
  : [];
for (const name of names) {
  const outfile = join(root, 'dist', 'lambda-bundles', name, 'index.js');
  const result = await build({
    entryPoints: [join(lambdaDir, name, 'handler.ts')],
    outfile,
    bundle: true,
    minify: true,
    treeShaking: true,
    platform: 'node',
    target: 'node22',
    format: 'cjs',
    mainFields: ['module', 'main'],
    metafile: true,
    logLevel: 'warning',
  });
  // esbuild's metafile (inputs and sizes, for bundle analysis) goes beside the bundle's folder, not in
  // it: that folder is the function's asset, whose hash must change only when the code does.
  mkdirSync(join(root, 'dist', 'lambda-meta'), { recursive: true });
  writeFileSync(join(root, 'dist', 'lambda-meta', `${name}.json`), JSON.stringify(result.metafile));
  rmSync(join(root, 'dist', 'lambda-bundles', name, 'meta.json'), { force: true });
  console.log(`bundled lambda/${name} -> ${outfile.replace(root + '/', '')} (${statSync(outfile).size} bytes)`);
}

// The operator commands (doctor, drill) run on the user's machine, where no AWS SDK is installed: the
// SDK clients they use are bundled in, from their ES module builds (tree-shaken, as the function's).
{
  const outfile = join(root, 'dist', 'cli-bundles', 'ops.js');
  await build({
    entryPoints: [join(root, 'bin', 'ops', 'index.ts')],
    outfile,
    bundle: true,
    minify: true,
    treeShaking: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    mainFields: ['module', 'main'],
    logLevel: 'warning',
  });
  console.log(`bundled bin/ops -> ${outfile.replace(root + '/', '')} (${statSync(outfile).size} bytes)`);
}
