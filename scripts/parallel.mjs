// Runs shell commands at once and fails when any fails (`npm test`: the build beside the source
// checks, which read src/ and test/, not the build; tsc leaves about half a core idle). Each
// command's output is printed whole when it ends, so the two never interleave.
// Usage: node scripts/parallel.mjs 'command one' 'command two' ...
import { spawn } from 'node:child_process';

const runs = process.argv.slice(2).map(
  (command) =>
    new Promise((resolve) => {
      const child = spawn(command, { shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
      const out = [];
      child.stdout.on('data', (d) => out.push(d));
      child.stderr.on('data', (d) => out.push(d));
      child.on('close', (code, signal) => {
        process.stdout.write(Buffer.concat(out));
        if (code !== 0) process.stderr.write(`parallel: \`${command}\` failed (${signal ?? `exit ${code}`})\n`);
        resolve(code === 0 ? 0 : 1);
      });
    }),
);
process.exitCode = (await Promise.all(runs)).some((c) => c !== 0) ? 1 : 0;
