/**
 * Loaded first in every ava worker (ava.config.mjs `require`). ava starts its workers with
 * --enable-source-maps, so Node reads and parses the source map of every module it loads: 8 MB
 * for the daemon, 6.7 MB of it from packages (typeorm alone 5.6 MB), about a tenth of a test
 * file's module loading. A stack names this project's TypeScript lines either way; a package's
 * frames name its shipped JavaScript, which is what its maintainers' issues quote anyway.
 */
import Module from 'node:module';

type Compile = (content: string, filename: string) => unknown;
const proto = Module.prototype as unknown as { _compile: Compile };
const compile = proto._compile;

if (process.sourceMapsEnabled) {
  proto._compile = function (this: unknown, content: string, filename: string) {
    if (!filename.includes('/node_modules/')) return compile.call(this, content, filename);
    process.setSourceMapsEnabled(false);
    try {
      return compile.call(this, content, filename);
    } finally {
      process.setSourceMapsEnabled(true);
    }
  };
}
