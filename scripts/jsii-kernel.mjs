// A minimal jsii host: what the `jsii` Python package does under `import sagemaker_resilient_endpoint`.
// It starts @jsii/runtime's self-contained bundle (the one the Python package embeds) and speaks its
// wire protocol, one JSON request and one JSON response per line on stdin/stdout: `load` a package's
// tarball, `create` an object, `invoke` / `sinvoke` a method, `get` / `sget` a property; objects come
// back as {"$jsii.byref": "fqn@id"} and structs go in as {"$jsii.struct": {fqn, data}}.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * The runtime bundle of @jsii/runtime `version`, fetched once with `npm pack` into `cacheDir` (only the
 * tarball: its bundle is self-contained, so its npm dependencies are not needed).
 */
export function runtimeBundle(version, cacheDir) {
  const dir = join(cacheDir, `jsii-runtime-${version}`);
  const bundle = join(dir, 'package', 'webpack', 'bin', 'jsii-runtime.js');
  if (!existsSync(bundle)) {
    mkdirSync(dir, { recursive: true });
    const tgz = execFileSync('npm', ['pack', `@jsii/runtime@${version}`, '--silent', '--prefer-offline', '--pack-destination', dir], {
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .pop();
    execFileSync('tar', ['xzf', join(dir, tgz), '-C', dir]);
  }
  return bundle;
}

export class JsiiKernel {
  constructor(bundle, env = {}) {
    this.child = spawn(process.execPath, [bundle], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION: '1', JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION: '1', ...env },
    });
    this.stderr = '';
    this.child.stderr.on('data', d => {
      this.stderr += d;
    });
    this.pending = [];
    this.waiting = [];
    createInterface({ input: this.child.stdout }).on('line', line => {
      const msg = JSON.parse(line);
      const w = this.waiting.shift();
      if (w) w(msg);
      else this.pending.push(msg);
    });
    this.child.on('exit', () => {
      for (const w of this.waiting.splice(0)) w({ error: `the jsii runtime exited:\n${this.stderr}` });
    });
  }

  next() {
    return new Promise(resolve => {
      const m = this.pending.shift();
      if (m) resolve(m);
      else this.waiting.push(resolve);
    });
  }

  /** The runtime's greeting, e.g. {hello: '@jsii/runtime@1.140.0'}. */
  hello() {
    return this.next();
  }

  async request(req) {
    this.child.stdin.write(`${JSON.stringify(req)}\n`);
    const res = await this.next();
    if ('error' in res)
      throw new Error(
        `jsii ${req.api} ${req.fqn ?? req.method ?? req.name ?? ''}: ${typeof res.error === 'string' ? res.error : JSON.stringify(res.error)}`,
      );
    if ('callback' in res) throw new Error(`unexpected callback from the jsii runtime: ${JSON.stringify(res)}`);
    return res.ok;
  }

  load(name, version, tarball) {
    return this.request({ api: 'load', name, version, tarball });
  }
  create(fqn, args = []) {
    return this.request({ api: 'create', fqn, args });
  }
  async invoke(objref, method, args = []) {
    return (await this.request({ api: 'invoke', objref, method, args })).result;
  }
  async sinvoke(fqn, method, args = []) {
    return (await this.request({ api: 'sinvoke', fqn, method, args })).result;
  }
  async get(objref, property) {
    return (await this.request({ api: 'get', objref, property })).value;
  }
  async sget(fqn, property) {
    return (await this.request({ api: 'sget', fqn, property })).value;
  }
  static struct(fqn, data) {
    return { '$jsii.struct': { fqn, data } };
  }

  close() {
    this.child.stdin.write(`${JSON.stringify({ exit: 0 })}\n`);
    this.child.stdin.end();
  }
}
