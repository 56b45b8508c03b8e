import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { Config, ConfigError, parseConfig } from './schema';

/** The install's root (where bin/, config/ and data/ live); relative paths in the config resolve here. */
export const PROJECT_ROOT = path.resolve(__dirname, '..', '..', '..');

export const defaultConfigPath = (): string => process.env.COINKEEP_CONFIG ?? path.join(PROJECT_ROOT, 'config', 'coinkeep.yaml');

const resolveFromRoot = (p: string): string => (path.isAbsolute(p) ? p : path.resolve(PROJECT_ROOT, p));

/** Parse YAML text into a validated Config with absolute paths. Throws ConfigError (one line). */
export function configFromText(text: string): Config {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (e) {
    // The parser's first line says what is wrong and where; the lines after it quote the file.
    const err = e as { linePos?: Array<{ line: number; col: number }>; message?: string };
    const at = err.linePos?.[0];
    const reason = String(err.message ?? '')
      .split('\n')[0]!
      .replace(/ at line \d+, column \d+:?$/, '');
    throw new ConfigError('(file)', `invalid YAML${at ? ` at line ${at.line}, column ${at.col}` : ''}${reason ? `: ${reason}` : ''}`);
  }
  const cfg = parseConfig(doc);
  cfg.data_dir = resolveFromRoot(cfg.data_dir);
  if (cfg.database.url.startsWith('sqlite:')) {
    cfg.database.url = `sqlite:${resolveFromRoot(cfg.database.url.slice('sqlite:'.length))}`;
  }
  return cfg;
}

export function loadConfig(file = defaultConfigPath()): Config {
  if (!existsSync(file)) throw new ConfigError('(file)', `${file} not found (run: coinkeep init)`);
  return configFromText(readFileSync(file, 'utf8'));
}
