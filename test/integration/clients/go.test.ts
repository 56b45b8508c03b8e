import test from 'ava';
import path from 'node:path';
import { clientSuite, root, run, runs } from './suite';

const dir = path.join(root, 'clients', 'go');

clientSuite(test, {
  name: 'go',
  missing: () => (runs(['go', 'version']) ? null : 'go not found (Debian: apt-get install golang-go)'),
  prepare: async (tmp) => {
    // The installed toolchain only, no module downloads, caches in the temp dir.
    const env = { GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod', GOPROXY: 'off', GOCACHE: path.join(tmp, 'gocache'), GOPATH: path.join(tmp, 'gopath') };
    const bin = path.join(tmp, 'testdriver');
    for (const argv of [
      ['go', 'vet', './...'],
      ['go', 'build', '-o', bin, './internal/testdriver'],
    ]) {
      const res = await run(argv, { cwd: dir, env, timeoutMs: 180_000 });
      if (res.code !== 0) throw new Error(`${argv.join(' ')} failed: ${res.stderr}${res.stdout}`);
    }
    return { command: [bin] };
  },
});
