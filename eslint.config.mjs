// Lint rules in the spirit of aws-cdk's own (typescript-eslint's recommended set, no default exports,
// no floating promises in the Lambda, explicit member accessibility on the public API).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'cdk.out/**',
      'node_modules/**',
      'dist-jsii/**',
      '**/*.js',
      '**/*.d.ts',
      'runtime/**',
      'examples/**',
      '.stryker-tmp*/**',
      'reports/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off', // CloudFormation templates and AWS events are untyped JSON
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports (jsii and aws-cdk convention).' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'prefer-const': 'error',
    },
  },
  {
    files: ['scripts/**/*.mjs', 'eslint.config.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    files: ['scripts/**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { process: 'readonly', console: 'readonly', require: 'readonly', __dirname: 'readonly' } },
    // CommonJS on purpose: the floor's synthesis redirects require() to the floor's aws-cdk-lib.
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['lib/**/*.ts'],
    ignores: ['lib/simulation/!(api).ts', 'lib/examples/**'], // the simulator's facade (api.ts) is public API
    rules: {
      '@typescript-eslint/explicit-member-accessibility': ['error', { accessibility: 'explicit', overrides: { constructors: 'off' } }],
    },
  },
);
