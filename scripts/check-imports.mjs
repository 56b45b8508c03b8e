// The import-boundary check of `npm test`: dependency-cruiser with the rules of
// .dependency-cruiser.cjs over src/. Its command line refuses Node 20 (its engines field says 22+);
// its API runs on Node 20, so the check calls the API. Usage: node scripts/check-imports.mjs
// [--config FILE] [DIR...] (defaults: .dependency-cruiser.cjs in this project, src); the exit code
// is the number of violations.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const args = process.argv.slice(2);
const at = args.indexOf('--config');
const configFile = at >= 0 ? path.resolve(args.splice(at, 2)[1]) : path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '.dependency-cruiser.cjs');
const dirs = args.length > 0 ? args : ['src'];

const options = await extractDepcruiseOptions(configFile);
const tsConfigFile = options.tsConfig?.fileName;
const tsConfig = tsConfigFile && existsSync(tsConfigFile) ? extractTSConfig(tsConfigFile) : undefined;
if (!tsConfig) delete options.tsConfig;
const result = await cruise(dirs, { ...options, outputType: 'err' }, {}, { tsConfig });
process.stdout.write(result.output);
process.exitCode = result.exitCode;
