// `npm run profile:examples`: measures both example models on their real inference code with the runtime
// helper's profiler (needs torch and scikit-learn: apt-get install -y python3-torch python3-sklearn) and
// writes examples/models/<name>/memory-profile.json, which the example stacks read
// (MemoryProfile.fromFile). Run it after changing an example's inference code.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const python = process.env.FRAMEWORK_PYTHON ?? '/usr/bin/python3';
const runs = {
  // Incident A: sequence lengths follow a power law from 5 to 3000 events; mobile clients send 15 % more.
  recommender: ['--lengths', 'powerlaw:5:3000', '--mobile-extra', '15%', '--count', '2000', '--soak', '1000'],
  // Incident B: rows per request, up to the 200,000 the example's MAX_SEQ_LEN allows (about 6 MiB of CSV).
  clustering: ['--lengths', 'powerlaw:100:200000', '--count', '2000', '--soak', '300'],
};
execFileSync('python3', [join(root, 'scripts', 'build-models.py')], { stdio: 'inherit' });
for (const [name, args] of Object.entries(runs)) {
  const dir = mkdtempSync(join(tmpdir(), `profile-${name}-`));
  try {
    execFileSync('tar', ['xzf', join(root, 'dist', 'models', name, 'model.tar.gz'), '-C', dir]);
    console.log(`\n${name}:`);
    execFileSync(
      python,
      [
        '-m',
        'resilient_endpoint_runtime.profile',
        '--model-dir',
        dir,
        ...args,
        '--out',
        join(root, 'examples', 'models', name, 'memory-profile.json'),
      ],
      {
        cwd: join(root, 'runtime', 'python'),
        stdio: 'inherit',
      },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
