import { slowestFirst } from './scripts/test-order.mjs';

/**
 * ava's settings. Test files run three at a time, in separate processes (daemons, chains and
 * signals are per process): on this 2-core machine many files wait on confirmations, polls or a
 * fresh two-factor step, so two at a time left a third of the CPU idle (idle run, 2026-11-29:
 * 2 at a time 783 s, 3 at a time 560 s, 4 at a time 618 s: the cores saturate and every file
 * slows). The slowest files start first (longest-processing-time-first, scripts/test-order.mjs), so
 * that the run does not end with one long file alone on a core. `npm test` runs the integration
 * files in groups instead (ava.integration.config.mjs); this config runs every file alone.
 */
const rank = (file) => {
  const at = slowestFirst.findIndex((p) => file.endsWith(`dist/${p}.js`));
  return at < 0 ? slowestFirst.length : at;
};

export default {
  files: ['dist/test/unit/**/*.test.js', 'dist/test/integration/**/*.test.js'],
  timeout: '2m',
  concurrency: 3,
  workerThreads: false,
  // Source maps for this project's files only: see test/helpers/own-source-maps.ts.
  require: ['./dist/test/helpers/own-source-maps.js'],
  sortTestFiles: (a, b) => rank(a) - rank(b) || a.localeCompare(b, [], { numeric: true }),
};
