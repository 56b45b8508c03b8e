import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { CliEnv, PROJECT_ROOT, type CliOptions, type Running } from './cli';

/**
 * A CliEnv whose cleanup first stops what it started the way Ctrl-C does (SIGTERM, waited for), so
 * `coinkeep dev` stops its nodes itself before the folder holding their chains is removed; a dev
 * that does not end in time is killed (its nodes end with it: the sandbox ties them to it).
 */
class SandboxEnv extends CliEnv {
  private readonly started: Running[] = [];

  override spawn(bin: string, args: string[], opts: CliOptions = {}): Running {
    const r = super.spawn(bin, args, opts);
    this.started.push(r);
    return r;
  }

  override async cleanup(): Promise<void> {
    await Promise.all(this.started.map((r) => r.stop('SIGTERM', 15000)));
    await super.cleanup();
  }
}

/** A CLI environment with config/dev.yaml's settings, moved to a temp data dir and a free port: what `coinkeep dev` runs with in the tests. */
export function sandboxEnv(): CliEnv {
  const devYaml = YAML.parse(readFileSync(path.join(PROJECT_ROOT, 'config', 'dev.yaml'), 'utf8')) as Record<string, unknown>;
  const env = new SandboxEnv();
  env.writeConfig({
    ...devYaml,
    data_dir: env.dataDir,
    listen: { host: '127.0.0.1', port: 0 },
    database: { url: `sqlite:${path.join(env.dataDir, 'coinkeep.db')}` },
  });
  return env;
}

/** How long a sandbox may take to start: its chains, the daemon and its signer child, on a loaded machine (as a spawned daemon's start). */
export const SANDBOX_START_MS = 90_000;

/** The one JSON object `coinkeep --json dev` prints once the sandbox serves, parsed. */
export async function sandboxStarted(dev: Running): Promise<any> {
  return JSON.parse((await dev.waitFor(/^\{.*\}\n/m, SANDBOX_START_MS))[0]);
}

/** Runs `script` with bash (at most 15 s), as a person pasting the sandbox's printed examples would: its exit code and output. */
export function bash(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { timeout: 15000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
