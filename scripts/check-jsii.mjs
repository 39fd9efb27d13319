// Proves the library builds with jsii (the compiler behind Python/Java/.NET packages), that the
// Python bindings generate, and that they work through jsii's own runtime: copies the library's sources
// into a scratch directory with the jsii settings (package.json "jsii"), runs `jsii` there, then
// `jsii-pacmak --code-only --targets python`, and reads the assembly (`.jsii`, JSON) back. Fails on any
// jsii error; when a construct the README documents, or a root export, is missing from the assembly (a
// free function or constant: jsii drops those silently, so Python users would not see them); when a
// README Python example uses a name the bindings lack; or when the embedded tarball, driven through
// @jsii/runtime as a Python program drives it, does not synthesize a guarded endpoint. Then a Python
// process runs the README's Python quick start on the generated package through `cdk synth --strict`
// (scripts/jsii-python.mjs), when jsii's Python runtime and aws-cdk-lib's bindings are in its cache
// outside the repo; without them it prints `SKIPPED: …` naming what is missing.
//
// jsii compiles against the peer floor (aws-cdk-lib and constructs at the lowest versions the peer
// ranges allow, scripts/jsii-floor.mjs; jsii asks for that itself: a peer dependency `^X` wants a
// development dependency at X), with tsconfig.build.json's options and files (prepack's compile: lib/,
// lambda/, bin/, bench/, `types: ["node"]`) plus test/template-shapes.ts: its TypeScript program is the
// floor's type-check of the code that ships (scripts/check-floor.mjs ran a second program for that), and
// it type-checks what prepack's compile would (scripts/check-package.mjs reuses the compile step's
// dist/). The assembly and API.md are the same as against the developed version (checked when this
// change was made). At run time, @jsii/runtime loads the developed aws-cdk-lib.
//
// Why a scratch copy: jsii writes next to its sources; the library's own build (tsc → dist/) stays as it
// is. PyPI is not reachable here, so the wheel itself is not built (`jsii-pacmak --targets python`
// without --code-only does that where it is).
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { checkApiReference } from './api-reference.mjs';
import { JsiiKernel, runtimeBundle } from './jsii-kernel.mjs';
import { describeFloor, peerFloor } from './jsii-floor.mjs';
import { runPythonQuickStart } from './jsii-python.mjs';
import { dirname, join } from 'node:path';

const root = process.cwd();
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const work = mkdtempSync(join(tmpdir(), 'jsii-'));
const bin = name => join(root, 'node_modules', '.bin', name);
const run = (cmd, args, env = {}) =>
  execFileSync(cmd, args, {
    cwd: work,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION: '1', JSII_DEPRECATED: 'quiet', ...env },
  });
const started = Date.now();
const floor = peerFloor(root);
try {
  // tsconfig.build.json's sources (and what they import: test/breaker-settings.ts for bench/), without
  // the JavaScript and declarations of an earlier in-place build.
  const sources = p => !p.endsWith('.js') && !p.endsWith('.d.ts') && !p.includes('__pycache__');
  for (const dir of ['lib', 'lambda', 'bin', 'bench', 'test'])
    if (existsSync(join(root, dir))) cpSync(join(root, dir), join(work, dir), { recursive: true, filter: sources });
  cpSync(join(root, 'README.md'), join(work, 'README.md'));
  cpSync(join(root, 'LICENSE'), join(work, 'LICENSE'));
  // The pre-built breaker bundle where lib/breaker/wiring.js looks for it (../../lambda-bundles).
  cpSync(join(root, 'dist', 'lambda-bundles'), join(work, 'lambda-bundles'), { recursive: true });
  // The repository's node_modules, with the peers at the floor (jsii resolves their assemblies here).
  mkdirSync(join(work, 'node_modules'));
  for (const entry of readdirSync(join(root, 'node_modules'))) {
    if (entry.startsWith('.') && entry !== '.bin') continue;
    symlinkSync(entry in floor.versions ? join(floor.modules, entry) : join(root, 'node_modules', entry), join(work, 'node_modules', entry), 'dir');
  }
  // The package as jsii ships it (the tarball inside the Python wheel): compiled lib, the bundle, the assembly.
  writeFileSync(
    join(work, 'package.json'),
    JSON.stringify(
      {
        ...pkg,
        main: 'lib/index.js',
        types: 'lib/index.d.ts',
        scripts: {},
        exports: undefined,
        devDependencies: { ...pkg.devDependencies, ...floor.versions },
        files: [
          'lib/**/*.js',
          'lib/**/*.d.ts',
          '!lib/examples',
          'lambda-bundles/**/index.js',
          'lambda-bundles/**/THIRD-PARTY-NOTICES.txt',
          '.jsii',
          'README.md',
          'LICENSE',
        ],
      },
      null,
      2,
    ),
  );
  // tsconfig.build.json's options (its `extends` chain merged) and files, plus test/template-shapes.ts,
  // compiled in place (no outDir), with 'aws-cdk-lib' and 'constructs' mapped to the floor for every
  // importer (cdk-nag's declarations too, which would otherwise find the developed version beside them).
  const build = tsconfigChain(join(root, 'tsconfig.build.json'));
  const paths = Object.fromEntries(
    Object.keys(floor.versions).flatMap(n => [
      [n, [join(floor.modules, n)]],
      [`${n}/*`, [join(floor.modules, n, '*')]],
    ]),
  );
  const options = { ...build.compilerOptions };
  delete options.outDir;
  delete options.rootDir;
  writeFileSync(
    join(work, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: { ...options, noEmitOnError: true, paths },
        include: build.include,
        exclude: build.exclude,
        files: ['test/template-shapes.ts'],
      },
      null,
      2,
    ),
  );

  try {
    // The rule set `minimal` (not the default `strict`, whose options these are): `strict` rejects the
    // `pathsBasePath` TypeScript's parser adds to any config with `paths`.
    // A 64-MB young generation: jsii's program (~5,000 files, 1.5 GB of heap) spends a sixth of its CPU
    // less in the scavenger (three runs each side by side: 21 s → 17.5 s of CPU).
    run(bin('jsii'), ['--tsconfig', 'tsconfig.json', '--validate-tsconfig', 'minimal', '--silence-warnings=reserved-word'], {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-semi-space-size=64`.trim(),
    });
  } catch (e) {
    process.stderr.write(`${e.stdout ?? ''}${e.stderr ?? ''}`);
    throw new Error(`jsii rejected the library, compiling against the peer floor (${describeFloor(floor.versions)}) (errors above)`, { cause: e });
  }
  // jsii-docgen reads every `.jsii` under the directory it runs in (node_modules included: it gunzips and
  // parses each, aws-cdk-lib's 87 MB among them, to learn their names): it runs in a directory holding
  // the assembly and, in node_modules, only the packages of its jsii dependency closure, as `work` resolves them.
  const apiReference = checkApiReference(assemblyOnly(work), root, process.argv.includes('--update-api'));
  run(bin('jsii-pacmak'), ['--code-only', '--targets', 'python', '--outdir', 'dist-jsii']);

  const assembly = JSON.parse(readFileSync(join(work, '.jsii'), 'utf8'));
  const types = Object.values(assembly.types ?? {});
  const names = new Set(types.map(t => t.name));
  const count = kind => types.filter(t => t.kind === kind).length;
  const documented = [
    'ResilientEndpoint',
    'ResilientEndpointFleet',
    'SharedCircuitBreaker',
    'CircuitBreaker',
    'EndpointMonitoring',
    'DataCapture',
    'ContainerImage',
    'ModelData',
    'SageMakerInstanceType',
    'ProductionReadinessChecks',
    'CapacityPlan',
    'VariantAutoScaling',
    'EndpointBase',
  ];
  const missing = documented.filter(n => !names.has(n));
  if (missing.length) throw new Error(`not in the jsii assembly: ${missing.join(', ')}`);

  const pyRoot = join(work, 'dist-jsii', 'python', 'src', pkg.jsii.targets.python.module);
  const py = readFileSync(join(pyRoot, '__init__.py'), 'utf8');
  for (const n of documented) if (!py.includes(`class ${n}(`)) throw new Error(`Python bindings lack class ${n}`);
  // The simulator's namespace is a submodule with its own Python package, holding the facade classes.
  const simPy = readFileSync(join(pyRoot, 'simulation', '__init__.py'), 'utf8');
  for (const n of ['Simulator', 'Traces', 'SimulationTrace'])
    if (!simPy.includes(`class ${n}(`)) throw new Error(`Python bindings lack simulation.${n}`);
  const instanceTypes = /class SageMakerInstanceType\([\s\S]*?(?=\nclass )/.exec(py)?.[0] ?? '';
  const g4dn = /def (ML_G4_?DN_XLARGE)\(/.exec(instanceTypes)?.[1];

  // The tarball jsii-pacmak embeds in the Python package is what jsii's runtime loads into Node.js.
  const tgz = readdirSync(join(pyRoot, '_jsii')).find(f => f.endsWith('.jsii.tgz'));
  if (!tgz) throw new Error('the Python package embeds no .jsii.tgz');
  const tarballFiles = execFileSync('tar', ['tzf', join(pyRoot, '_jsii', tgz)], { encoding: 'utf8' })
    .trim()
    .split('\n').length;

  // Through jsii's own runtime, as a Python program would run it: the @jsii/runtime release the
  // generated package requires (its setup.py pins `jsii>=X`), started as the Python `jsii` package
  // starts it, loads the jsii dependency closure from npm tarballs, then the embedded tarball, and
  // builds the README's recommender (structs passed as structs, static members read as statics), reads
  // a metric, runs the simulator's facade and synthesizes.
  const setupPy = readFileSync(join(work, 'dist-jsii', 'python', 'setup.py'), 'utf8');
  const runtimeVersion = /"jsii>=([\d.]+)/.exec(setupPy)?.[1];
  if (!runtimeVersion) throw new Error('the generated setup.py does not pin jsii');
  const cache = join(root, 'node_modules', '.jsii-runtime');
  const kernel = new JsiiKernel(runtimeBundle(runtimeVersion, cache), { CDK_VALIDATION: 'false' });
  const deps = jsiiClosure(root, Object.keys(pkg.peerDependencies));
  let viaKernel;
  try {
    const { hello } = await kernel.hello();
    // Their npm tarballs, fetched (from npm's cache) once into node_modules/.jsii-runtime.
    const tarballOf = d => join(cache, `${d.name.replace(/^@/, '').replace('/', '-')}-${d.version}.tgz`);
    const missing = deps.filter(d => !existsSync(tarballOf(d))).map(d => `${d.name}@${d.version}`);
    if (missing.length) execFileSync('npm', ['pack', ...missing, '--silent', '--prefer-offline', '--pack-destination', cache], { stdio: 'ignore' });
    for (const dep of deps) await kernel.load(dep.name, dep.version, tarballOf(dep));
    await kernel.load(pkg.name, pkg.version, join(pyRoot, '_jsii', tgz));
    const P = pkg.name;
    const S = JsiiKernel.struct;
    const outdir = join(work, 'kernel.out');
    const app = await kernel.create('aws-cdk-lib.App', [S('aws-cdk-lib.AppProps', { outdir })]);
    const stack = await kernel.create('aws-cdk-lib.Stack', [app, 'ViaKernel']);
    const endpoint = await kernel.create(`${P}.ResilientEndpoint`, [
      stack,
      'Recommender',
      S(`${P}.ResilientEndpointProps`, {
        model: S(`${P}.ModelProps`, {
          image: await kernel.sinvoke(`${P}.ContainerImage`, 'fromImageUri', [
            '763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-inference:2.3.0-gpu-py311-cu121-ubuntu20.04-sagemaker',
          ]),
          memoryFootprint: S(`${P}.MemoryFootprint`, { gpu: await kernel.sinvoke('aws-cdk-lib.Size', 'gibibytes', [4]) }),
        }),
        instanceType: await kernel.sget(`${P}.SageMakerInstanceType`, 'ML_G4DN_XLARGE'),
        instanceCount: 2,
        fallback: S(`${P}.FallbackVariantProps`, { instanceCount: 1 }),
      }),
    ]);
    const metric = await kernel.invoke(endpoint, 'metricGpuMemoryUtilization');
    const metricName = await kernel.get(metric, 'metricName');
    const trace = await kernel.sinvoke(`${P}.simulation.Traces`, 'fromValues', [Array(300).fill(50)]);
    const report = await kernel.sinvoke(`${P}.simulation.Simulator`, 'compare', [trace, endpoint]);
    const outcomes = report['$jsii.byref'] ? await kernel.get(report, 'outcomes') : report.outcomes;
    if (!Array.isArray(outcomes) || outcomes.length !== 4)
      throw new Error(`Simulator.compare through the runtime returned ${JSON.stringify(report)}`);
    const assembly = await kernel.invoke(app, 'synth');
    const dir = await kernel.get(assembly, 'directory');
    const template = JSON.parse(readFileSync(join(dir, 'ViaKernel.template.json'), 'utf8'));
    const resources = Object.values(template.Resources);
    const config = resources.find(r => r.Type === 'AWS::SageMaker::EndpointConfig');
    const variants = config?.Properties.ProductionVariants.map(v => `${v.VariantName}:${v.InstanceType}×${v.InitialInstanceCount}`);
    if (!variants || variants.length !== 2 || !resources.some(r => r.Type === 'AWS::Lambda::Function' && r.Properties.Handler === 'index.handler')) {
      throw new Error(`the endpoint synthesized through the jsii runtime lacks its variants or its breaker: ${JSON.stringify(variants)}`);
    }
    // The breaker's pre-built bundle, shipped in the tarball, staged as the function's asset.
    const bundle = readFileSync(join(work, 'lambda-bundles', 'circuit-breaker', 'index.js'));
    const staged = readdirSync(dir)
      .filter(d => d.startsWith('asset.'))
      .some(d => existsSync(join(dir, d, 'index.js')) && readFileSync(join(dir, d, 'index.js')).equals(bundle));
    if (!staged) throw new Error('the breaker bundle was not staged as the function asset');
    viaKernel = `${hello} drove it as Python would: ${resources.length} resources (${variants.join(', ')}), metric ${metricName}, Simulator.compare ${outcomes.length} scenarios, breaker bundle staged`;
  } finally {
    kernel.close();
  }

  // The Python examples of the README and docs/*.md (every ```python block that imports this package; the quick start
  // must be one): each parses, every `sre.X` / `simulation.X` is a class of the generated bindings and
  // every `.Y` on it a member, every method or property used on a result is one the bindings define,
  // and every keyword argument is a parameter name there (or of aws_cdk's Validations.acknowledge).
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const quick = /```python\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## Quick start')))?.[1];
  if (!quick?.includes(pkg.jsii.targets.python.module))
    throw new Error('README has no Python quick start (a ```python block under "## Quick start")');
  const pages = [
    readme,
    ...readdirSync(join(root, 'docs'))
      .filter(f => f.endsWith('.md'))
      .map(f => readFileSync(join(root, 'docs', f), 'utf8')),
  ];
  const examples = pages
    .flatMap(page => [...page.matchAll(/```python\n([\s\S]*?)```/g)].map(m => m[1]))
    .filter(b => b.includes(pkg.jsii.targets.python.module));
  const bindings = { sre: py, simulation: simPy };
  const classBody = (src, cls) => new RegExp(`\\nclass ${cls}\\b[\\s\\S]*?(?=\\n(?:@jsii\\.\\w+\\([^\\n]*\\)\\n)*class |$)`).exec(src)?.[0];
  const problems = [];
  examples.forEach((code, i) => {
    writeFileSync(join(work, `example${i}.py`), code);
    execFileSync('python3', ['-m', 'py_compile', join(work, `example${i}.py`)], { stdio: 'inherit' });
    for (const [, ns, cls, member] of code.matchAll(/\b(sre|simulation)\.(\w+)(?:\.(\w+))?/g)) {
      const body = classBody(bindings[ns], cls);
      if (!body) problems.push(`${ns}.${cls} is not a class of the bindings`);
      else if (member && !new RegExp(`def ${member}\\(`).test(body)) problems.push(`${ns}.${cls}.${member} is not a member of ${cls}`);
    }
    const foreignObjects = new Set(['sre', 'simulation', 'self', 'Validations', 'Size', 'Duration', 'app', 'json', 'boto3', 'sys']);
    const bare = code.replace(/#.*$/gm, '').replace(/"[^"\n]*"|'[^'\n]*'/g, '""'); // no comments or strings
    for (const [, obj, attr] of bare.matchAll(/\b([a-z_]\w*)\.([a-z_][a-z0-9_]*)\b/gi)) {
      if (!foreignObjects.has(obj) && !/^[A-Z]/.test(attr) && !new RegExp(`def ${attr}\\(\\s*self`).test(py + simPy))
        problems.push(`${obj}.${attr}: no method or property ${attr} in the bindings`);
    }
    const foreignKeywords = new Set(['id', 'reason', 'file']); // aws_cdk's Acknowledgment(id=, reason=), print(file=)
    for (const [, kw] of code.matchAll(/[(,\s](\w+)=(?!=)/g)) {
      if (!foreignKeywords.has(kw) && !new RegExp(`\\n\\s+${kw}: `).test(py + simPy))
        problems.push(`keyword ${kw}= is not a parameter of the bindings`);
    }
  });
  if (problems.length) throw new Error(`The Python examples (README, docs/) do not match the generated bindings:\n  ${problems.join('\n  ')}`);

  // Then the quick start itself, run by a Python process on the generated package (scripts/jsii-python.mjs).
  const viaPython = runPythonQuickStart({ root, work, bindings: join(work, 'dist-jsii', 'python', 'src'), runtimeVersion, closure: deps, quick });

  // What jsii does not carry: root exports that are neither a type nor an enum in the assembly.
  const rootExports = Object.keys(createRequire(import.meta.url)(join(root, 'dist', 'lib', 'index.js')));
  const typeExports = [...readFileSync(join(root, 'lib', 'index.ts'), 'utf8').matchAll(/export type \{([^}]*)\}/g)].flatMap(m =>
    m[1]
      .split(',')
      .map(n => n.trim())
      .filter(Boolean),
  );
  const submodules = new Set(Object.keys(assembly.submodules ?? {}).map(fqn => fqn.slice(pkg.name.length + 1)));
  const dropped = [...rootExports, ...typeExports].filter(n => !names.has(n) && !submodules.has(n));

  const files = readdirSync(join(work, 'dist-jsii', 'python', 'src', pkg.jsii.targets.python.module), { recursive: true }).length;
  console.log(
    `jsii check: compiled against the peer floor (${describeFloor(floor.versions)}) with tsconfig.build.json's options and files and test/template-shapes.ts; ` +
      `${types.length} types (${count('class')} classes, ${count('interface')} interfaces and structs, ${count('enum')} enums) in the assembly; ` +
      `Python bindings generated (${files} files, module ${pkg.jsii.targets.python.module}; ml.g4dn.xlarge is SageMakerInstanceType.${g4dn}()); ` +
      `submodule${submodules.size === 1 ? '' : 's'} ${[...submodules].join(', ')}; embedded npm tarball ${tarballFiles} files; ${viaKernel}; ${apiReference}; ` +
      `${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  console.log(viaPython);
  if (dropped.length)
    throw new Error(`root exports jsii does not carry to Python (free functions or constants; make them static members): ${dropped.join(', ')}`);
} finally {
  if (process.env.KEEP_JSII_WORKDIR) console.log(`jsii check: kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

/** The jsii packages `names` need, dependencies first (non-bundled dependencies that carry a `jsii` section), as installed here. */
function jsiiClosure(from, names, seen = new Map()) {
  for (const name of names) {
    if (seen.has(name)) continue;
    const manifest = JSON.parse(readFileSync(join(from, 'node_modules', name, 'package.json'), 'utf8'));
    if (!manifest.jsii) continue;
    const bundled = new Set(manifest.bundleDependencies ?? manifest.bundledDependencies ?? []);
    jsiiClosure(
      from,
      Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }).filter(d => !bundled.has(d)),
      seen,
    );
    seen.set(name, { name, version: manifest.version });
  }
  return [...seen.values()];
}

/** A tsconfig's compilerOptions with its `extends` chain merged (nearer wins), and its include and exclude (nearest that has them). */
function tsconfigChain(file) {
  const config = JSON.parse(readFileSync(file, 'utf8'));
  const base = config.extends ? tsconfigChain(join(file, '..', config.extends)) : { compilerOptions: {} };
  return {
    compilerOptions: { ...base.compilerOptions, ...config.compilerOptions },
    include: config.include ?? base.include,
    exclude: config.exclude ?? base.exclude,
  };
}

/** `work/docgen`: `work`'s package.json and `.jsii`, and node_modules with the packages of its jsii dependency closure only. */
function assemblyOnly(work) {
  const dir = join(work, 'docgen');
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  for (const f of ['package.json', '.jsii']) copyFileSync(join(work, f), join(dir, f));
  const closure = new Set(Object.keys(JSON.parse(readFileSync(join(work, '.jsii'), 'utf8')).dependencyClosure ?? {}));
  const link = (name, from) => {
    if (!closure.delete(name)) return;
    const found = packageDir(name, from);
    mkdirSync(dirname(join(dir, 'node_modules', name)), { recursive: true });
    symlinkSync(found, join(dir, 'node_modules', name), 'dir');
    const manifest = JSON.parse(readFileSync(join(found, 'package.json'), 'utf8'));
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })) link(dep, found);
  };
  const own = JSON.parse(readFileSync(join(work, 'package.json'), 'utf8'));
  for (const dep of Object.keys({ ...own.dependencies, ...own.peerDependencies })) link(dep, work);
  if (closure.size) throw new Error(`the jsii dependency closure names packages no dependency leads to: ${[...closure].join(', ')}`);
  return dir;
}

/** The directory of package `name` as Node.js finds it from the directory `from`, symlinks resolved. */
function packageDir(name, from) {
  for (let dir = realpathSync(from); ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    if (dirname(dir) === dir) throw new Error(`cannot find ${name} from ${from}`);
  }
}
