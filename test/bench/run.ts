import { readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * `npm run bench [name...]`: runs every test/bench/*.bench.ts (or those named), one after the
 * other in this process. Each exports `run(): Promise<void>` that prints its own figures and ratios.
 */
async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const files = readdirSync(__dirname)
    .filter((f) => f.endsWith('.bench.js'))
    .filter((f) => wanted.length === 0 || wanted.includes(f.replace(/\.bench\.js$/, '')))
    .sort();
  if (files.length === 0) throw new Error(`no benchmark matches ${wanted.join(' ')}`);
  console.log(`coinkeep benchmarks: node ${process.version}; ratios are against baselines measured in this run`);
  for (const f of files) {
    const mod = (await import(path.join(__dirname, f))) as { run(): Promise<void> };
    await mod.run();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
