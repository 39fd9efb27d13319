// The README's Python quick start, run by a Python process through `cdk synth --strict`: the generated
// `sagemaker_resilient_endpoint` package (made by check-jsii.mjs with `jsii-pacmak --code-only`),
// aws-cdk-lib's and constructs' Python bindings and jsii's Python runtime, all on PYTHONPATH of an
// interpreter that has Debian's python3-attr, python3-cattr and python3-dateutil.
//
// PyPI is not reachable here, and the project commits no code fetched from a public repository nor
// anything that builds it: jsii's Python runtime (with the pieces Debian lacks or ships too old for it)
// and the bindings of aws-cdk-lib's jsii closure are prepared outside the repo, in a cache directory
// (PYTHON_JSII_CACHE, default ~/.cache/sagemaker-resilient-endpoint/python-jsii):
//   jsii-<version>/site/            the `jsii` package at the version the generated setup.py requires,
//                                   embedding @jsii/runtime <version>; `publication`; typeguard at jsii's
//                                   pin (Debian's 2.2.2 fails on Python 3.11); typing_extensions ≥ 4.6
//                                   (the generated protocols read __protocol_attrs__; Debian has 4.4)
//   bindings/aws-cdk-lib-<version>/site/   the Python code of every package of aws-cdk-lib's jsii
//                                   closure, each with its embedded npm tarball (checked name by name)
// Without them this says `SKIPPED: …` with what is missing, and nothing fails.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';

/** The Python modules the run needs beyond the standard library, and who supplies each. */
const MODULES = {
  attr: 'apt-get install -y python3-attr',
  cattrs: 'apt-get install -y python3-cattr',
  dateutil: 'apt-get install -y python3-dateutil',
  typing_extensions: 'the cache (typing_extensions ≥ 4.6)',
  typeguard: 'the cache (typeguard 2.13.3, jsii’s pin)',
  publication: 'the cache (publication 0.0.3)',
  jsii: 'the cache (jsii’s Python runtime)',
};

/**
 * Runs the quick start; returns the line to print: what was verified, or `SKIPPED: …`. Throws when the
 * pieces are there and the quick start fails or its template lacks the endpoint.
 * @param {object} o
 * @param {string} o.root the repository (node_modules, the cdk CLI)
 * @param {string} o.work a scratch directory to write app.py and cdk.out into
 * @param {string} o.bindings the directory holding the generated package (dist-jsii/python/src)
 * @param {string} o.runtimeVersion the jsii runtime version the generated setup.py requires
 * @param {{name: string, version: string}[]} o.closure aws-cdk-lib's jsii closure, as installed
 * @param {string} o.quick the README's Python quick start
 */
export function runPythonQuickStart({ root, work, bindings, runtimeVersion, closure, quick }) {
  const cache = process.env.PYTHON_JSII_CACHE ?? join(homedir(), '.cache', 'sagemaker-resilient-endpoint', 'python-jsii');
  const cdkLib = closure.find(d => d.name === 'aws-cdk-lib');
  const runtimeSite = join(cache, `jsii-${runtimeVersion}`, 'site');
  const cdkSite = join(cache, 'bindings', `aws-cdk-lib-${cdkLib.version}`, 'site');
  const skip = why =>
    `SKIPPED: the README's Python quick start was not run by a Python process: ${why}. ` +
    'PyPI (which ships jsii, aws-cdk-lib and constructs for Python) is not reachable here; the check-jsii steps above still ran.';

  const missing = [];
  const runtimeMeta = join(runtimeSite, 'jsii', '_metadata.json');
  const runtimeHas = existsSync(runtimeMeta) ? JSON.parse(readFileSync(runtimeMeta, 'utf8')) : undefined;
  if (runtimeHas?.version !== runtimeVersion || runtimeHas?.['jsii-runtime']?.version !== runtimeVersion)
    missing.push(`${runtimeSite} (jsii's Python runtime ${runtimeVersion} embedding @jsii/runtime ${runtimeVersion})`);
  const tarballs = closure.map(dep => {
    const module = JSON.parse(readFileSync(join(root, 'node_modules', dep.name, 'package.json'), 'utf8')).jsii.targets.python.module;
    return { dep, path: join(cdkSite, ...module.split('.'), '_jsii', `${dep.name.replace(/^@[^/]+\//, '')}@${dep.version}.jsii.tgz`) };
  });
  const absent = tarballs.filter(t => !existsSync(t.path));
  if (absent.length === tarballs.length) missing.push(`${cdkSite} (Python bindings of ${closure.map(d => `${d.name} ${d.version}`).join(', ')})`);
  else for (const t of absent) missing.push(`${t.path} (${t.dep.name} ${t.dep.version}'s Python bindings)`);
  if (missing.length) return skip(`missing ${missing.join('; ')}`);

  const env = {
    ...process.env,
    PYTHONPATH: [bindings, cdkSite, runtimeSite].join(':'),
    JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION: '1',
    JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION: process.versions.node.split('.')[0],
    JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION: '1',
  };
  // The first interpreter that imports every module, and the versions it found.
  const probe = `import importlib, importlib.metadata as m, sys
for mod in ${JSON.stringify(Object.keys(MODULES))}:
    try: importlib.import_module(mod)
    except Exception as e: sys.exit(f"{mod}: {e}")
print(sys.version.split()[0], *(f"{d} {m.version(d)}" for d in ["jsii", "attrs", "cattrs", "python-dateutil", "typeguard", "typing_extensions", "publication"]), sep=", ")`;
  const tried = [];
  let python;
  let versions;
  for (const py of process.env.JSII_PYTHON ? [process.env.JSII_PYTHON] : ['/usr/bin/python3', 'python3']) {
    const r = spawnSync(py, ['-c', probe], { env, encoding: 'utf8' });
    if (r.status === 0) {
      python = py;
      versions = r.stdout.trim();
      break;
    }
    const failed = (r.stderr || String(r.error ?? '')).trim().split('\n').pop();
    tried.push(`${py}: ${failed}${MODULES[failed.split(':')[0]] ? ` (from ${MODULES[failed.split(':')[0]]})` : ''}`);
  }
  if (!python) return skip(`no Python imports what it needs (${tried.join('; ')})`);

  // `cdk synth --strict Recommender`, as the README runs the TypeScript quick start: any warning fails
  // it, stdout is the template (the quick start prints its plan to stderr).
  writeFileSync(join(work, 'app.py'), quick);
  writeFileSync(
    join(work, 'cdk.json'),
    // The context `cdk init app --language python` writes: aws-cdk-lib's recommended feature flags (among
    // them the target partitions aws and aws-cn, which decide whether a budget needs a partition condition).
    JSON.stringify({
      app: `${python} app.py`,
      output: 'cdk.py.out',
      notices: false,
      context: {
        ...JSON.parse(readFileSync(join(root, 'node_modules', 'aws-cdk-lib', 'recommended-feature-flags.json'), 'utf8')),
        'cli-telemetry': false,
      },
    }),
  );
  let stdout;
  try {
    stdout = execFileSync(process.execPath, [join(root, 'node_modules', 'aws-cdk', 'bin', 'cdk'), 'synth', '--strict', 'Recommender'], {
      cwd: work,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    const stderr = String(e.stderr ?? '')
      .split('\n')
      .filter(l => !l.startsWith("b'!!")) // the jsii runtime's Node.js banner, relayed by the Python client
      .join('\n');
    throw new Error(`the README's Python quick start failed under ${python} (${versions}):\n${stderr}`, { cause: e });
  }
  const template = JSON.parse(readFileSync(join(work, 'cdk.py.out', 'Recommender.template.json'), 'utf8'));
  const resources = Object.values(template.Resources ?? {});
  const of = type => resources.filter(r => r.Type === type);
  const variants = of('AWS::SageMaker::EndpointConfig').flatMap(c =>
    c.Properties.ProductionVariants.map(v => `${v.InstanceType}×${v.InitialInstanceCount}`),
  );
  const breaker = of('AWS::Lambda::Function').some(f => f.Properties.Handler === 'index.handler');
  const scaling = of('AWS::ApplicationAutoScaling::ScalableTarget').map(t => `${t.Properties.MinCapacity}-${t.Properties.MaxCapacity}`);
  const emails = of('AWS::SNS::Subscription').map(s => s.Properties.Endpoint);
  const problems = [
    of('AWS::SageMaker::Endpoint').length !== 1 && `${of('AWS::SageMaker::Endpoint').length} AWS::SageMaker::Endpoint (want 1)`,
    variants.join(', ') !== 'ml.g4dn.xlarge×2, ml.g4dn.xlarge×1' && `variants ${variants.join(', ')} (want ml.g4dn.xlarge×2 and its fallback ×1)`,
    !breaker && 'no breaker function (handler index.handler)',
    !scaling.includes('2-4') && `scalable targets ${scaling.join(', ')} (want 2-4)`,
    !emails.includes('oncall@example.com') && `alarm e-mail subscriptions ${emails.join(', ')} (want oncall@example.com)`,
    !sameTemplate(stdout, resources.length) && `stdout that is not the template (\`cdk synth Recommender > template.yaml\`): ${stdout.slice(0, 200)}`,
  ].filter(Boolean);
  if (problems.length) throw new Error(`the README's Python quick start synthesized, but its template has ${problems.join('; ')}`);
  return (
    `Python quick start: ${python} (${versions}) ran the README's app.py through cdk synth --strict with ` +
    `aws-cdk-lib ${cdkLib.version}'s Python bindings: ${resources.length} resources, endpoint with ${variants.join(' + ')}, breaker function, scaling 2-4, alarm e-mail`
  );
}

/** Whether `stdout` parses as a template with `count` resources. */
function sameTemplate(stdout, count) {
  try {
    return Object.keys(parse(stdout)?.Resources ?? {}).length === count;
  } catch {
    return false;
  }
}
