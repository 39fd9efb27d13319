// The 'slow' group of scripts/jest-groups.cjs: its suites in one file, so that they share one module registry
// (`npm test`; why and which suites may join: that file). Each suite in its own describe block.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { GROUPS } = require('../scripts/jest-groups.cjs') as { GROUPS: Record<string, string[]> };

for (const suite of GROUPS['slow']) {
  describe(suite, () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(`./${suite}`);
  });
}

export {}; // a module, not a script: each group file has its own scope
