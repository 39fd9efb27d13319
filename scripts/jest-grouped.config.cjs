// jest's configuration for `npm test` and `npm run test:quick`: package.json's, with the suites of
// scripts/jest-groups.cjs run through their group files (test/*.group.ts) instead of one by one.
const path = require('node:path');
const { GROUPS, groupFile } = require('./jest-groups.cjs');

const base = require('../package.json').jest;
const escapeRegExp = s => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

module.exports = {
  ...base,
  rootDir: path.join(__dirname, '..'),
  testMatch: [...base.testMatch, ...Object.keys(GROUPS).map(g => `**/${groupFile(g)}`)],
  testPathIgnorePatterns: ['/node_modules/', ...Object.values(GROUPS).flatMap(files => files.map(f => `/test/${escapeRegExp(f)}$`))],
};
