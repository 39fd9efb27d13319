// A jest test sequencer for `npm run mutation`: runs the suites in the order the config's `testMatch`
// lists them. scripts/mutation.mjs lists a group's own (fast, exact) suites first, so a mutant they kill
// stops there, before the slower cross-module suites (jest's default runs the slowest first).
const Sequencer = require('@jest/test-sequencer').default;

class InListedOrder extends Sequencer {
  sort(tests) {
    const rank = t => {
      const patterns = t.context.config.testMatch;
      const i = patterns.findIndex(p => t.path.endsWith(p.replace(/^\*\*\//, '')));
      return i < 0 ? patterns.length : i;
    };
    return [...tests].sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = InListedOrder;
