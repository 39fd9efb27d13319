// The runner of `npm test` (scripts/test.mjs): steps in lanes that run side by side, a step starting when
// its lane reaches it and the steps it needs have finished. It talks while it works:
//   - a line when a step starts, and one when it ends (its time, and the last lines of its output);
//   - a line at least every `heartbeatMs` while steps run, naming each running step, how long it has run
//     and the last line it printed (jest's "PASS test/…" as each suite ends);
//   - a step's line that starts with "▸ " is printed at once (e.g. "▸ downloading Node.js 24 …");
//   - on the first failure, that step's whole output, and every other step is stopped.
// test/test-runner.test.ts runs it on small steps.
const { spawn } = require('node:child_process');
const { setInterval, clearInterval } = require('node:timers');

const secs = ms => `${(ms / 1000).toFixed(1)} s`;
const clock = ms => {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
};

/**
 * Runs `steps` ({name: {cmd, needs?, why}}) in `lanes` (arrays of names). Resolves true when every step
 * passed, false at the first failure. `write` receives whole lines.
 */
function runSteps({
  steps,
  lanes,
  serial = false,
  heartbeatMs = 10_000,
  write = s => process.stdout.write(s),
  env = process.env,
  title = 'npm test',
}) {
  const started = Date.now();
  const children = new Set();
  const running = new Map(); // name → { begin, last }
  let failed = false;
  let lastWrite = Date.now();
  const say = text => {
    lastWrite = Date.now();
    write(text.endsWith('\n') ? text : `${text}\n`);
  };
  const order = serial ? [lanes.flat()] : lanes;
  say(
    `${title}: ${Object.keys(steps).length} steps${serial || order.length === 1 ? ', one after another' : ` in ${order.length} lanes side by side`} ` +
      `(${order.map(l => l.join(' → ')).join('; ')}); a line at least every ${heartbeatMs / 1000} s names what runs`,
  );

  const heartbeat = setInterval(
    () => {
      if (!running.size || Date.now() - lastWrite < heartbeatMs * 0.9) return;
      const now = Date.now();
      const what = [...running].map(([name, r]) => `${name} (${clock(now - r.begin)}${r.last ? `; last: ${r.last}` : ''})`);
      say(`… ${clock(now - started)}: running ${what.join(', ')}`);
    },
    Math.max(50, Math.round(heartbeatMs / 5)),
  );

  function run(name) {
    const step = steps[name];
    const begin = Date.now();
    const state = { begin, last: '' };
    running.set(name, state);
    say(`▶ ${name.padEnd(8)} ${step.why}`);
    return new Promise((resolve, reject) => {
      // Its own process group, so that stopping it stops what its shell started too.
      const child = spawn(step.cmd, { shell: true, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, FORCE_COLOR: '0' } });
      children.add(child);
      let out = '';
      let partial = '';
      const take = d => {
        out += d;
        const lines = (partial + d).split('\n');
        partial = lines.pop();
        for (const line of lines) {
          const text = line.trim();
          if (!text) continue;
          if (text.startsWith('▸ ')) say(`  ${name}: ${text.slice(2)}`);
          state.last = text.length > 100 ? `${text.slice(0, 97)}…` : text;
        }
      };
      child.stdout.on('data', take);
      child.stderr.on('data', take);
      child.on('close', code => {
        children.delete(child);
        running.delete(name);
        if (failed) return reject(new Error(`${name} stopped`));
        if (code !== 0) {
          say(`${out}\n✗ ${name} (${step.cmd}) failed with exit code ${code} after ${secs(Date.now() - begin)}`);
          return reject(new Error(name));
        }
        const tail = out.trim()
          ? out
              .trim()
              .split('\n')
              .slice(-3)
              .map(l => `    ${l}`)
              .join('\n')
          : '';
        say(`✓ ${name.padEnd(8)} ${secs(Date.now() - begin).padStart(7)}  ${step.why}${tail ? `\n${tail}` : ''}`);
        resolve();
      });
    });
  }

  // One promise per step, settled when it ends; a step first waits for the steps it needs.
  const settle = {};
  const finished = Object.fromEntries(
    Object.keys(steps).map(n => [
      n,
      new Promise((resolve, reject) => {
        settle[n] = { resolve, reject };
      }),
    ]),
  );
  Object.values(finished).forEach(p => p.catch(() => {}));
  async function lane(names) {
    for (const name of names) {
      try {
        await Promise.all((steps[name].needs ?? []).map(d => finished[d]));
        await run(name);
        settle[name].resolve();
      } catch (e) {
        settle[name].reject(e);
        throw e;
      }
    }
  }

  return Promise.all(order.map(lane)).then(
    () => {
      clearInterval(heartbeat);
      say(`\nall checks passed in ${secs(Date.now() - started)}${serial ? ' (serial)' : order.length > 1 ? ` (${order.length} lanes)` : ''}`);
      return true;
    },
    () => {
      failed = true;
      clearInterval(heartbeat);
      for (const c of children) {
        try {
          process.kill(-c.pid, 'SIGTERM');
        } catch {
          c.kill('SIGTERM');
        }
      }
      return false;
    },
  );
}

module.exports = { runSteps };
