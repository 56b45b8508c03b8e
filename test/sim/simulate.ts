/**
 * `npm run simulate -- --seed S --minutes M [--steps N] [--plant NAME] [--shrink R | --no-shrink] [--postgres] [--emphasis kind=weight,...] [--verbose]`: one simulation
 * (simulator.ts) on fresh local chains and a fresh daemon on SQLite, or with `--postgres` two daemons
 * on one fresh PostgreSQL database (the server of docs/testing.md). Ends with one line, `simulate: seed S, N steps, F faults,
 * K invariant checks, V violations`, and exits 1 when V > 0 (the evidence kept, its folder printed).
 */
import { killAllAnvils } from '../helpers/anvil';
import { killAllBcoins } from '../helpers/bcoin';
import { isPlant, PLANTS } from './planted-bugs';
import { simulate, STEP_KINDS, type StepKind } from './simulator';

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
}

async function main(): Promise<number> {
  const seed = Number(option('--seed') ?? Math.floor(Math.random() * 2 ** 31));
  const minutes = option('--minutes') === undefined ? undefined : Number(option('--minutes'));
  const steps = option('--steps') === undefined ? undefined : Number(option('--steps'));
  const plant = option('--plant');
  if (!Number.isInteger(seed) || (minutes !== undefined && !(minutes > 0)) || (steps !== undefined && !(steps > 0))) {
    console.error('usage: npm run simulate -- --seed S (--minutes M | --steps N) [--plant NAME] [--postgres]');
    return 2;
  }
  if (plant !== undefined && !isPlant(plant)) {
    console.error(`--plant: one of ${Object.keys(PLANTS).join(', ')}`);
    return 2;
  }
  const shrink = process.argv.includes('--no-shrink') ? 0 : Number(option('--shrink') ?? 8);
  // `--emphasis static_address=20,pay_static=20`: weights that replace the default ones for these kinds (a run that makes them frequent).
  const emphasis: Partial<Record<StepKind, number>> = {};
  for (const pair of (option('--emphasis') ?? '').split(',').filter(Boolean)) {
    const [kind, weight] = pair.split('=');
    if (!kind || !STEP_KINDS.includes(kind as StepKind) || !(Number(weight) >= 0)) {
      console.error(`--emphasis: kind=weight pairs, comma-separated; kinds: ${STEP_KINDS.join(', ')}`);
      return 2;
    }
    emphasis[kind as StepKind] = Number(weight);
  }
  const r = await simulate({
    seed,
    minutes: minutes ?? (steps === undefined ? 1 : undefined),
    maxSteps: steps,
    plant,
    shrink,
    postgres: process.argv.includes('--postgres'),
    emphasis,
    log: (l) => console.log(l),
  });
  if (process.argv.includes('--verbose')) for (const line of r.stepList) console.log(line);
  console.log(`ops: ${JSON.stringify(r.opsByKind)}`);
  console.log(`faults: ${JSON.stringify(r.faultsByKind)}`);
  if (r.requestsByDaemon.length > 1) console.log(`requests by daemon: ${r.requestsByDaemon.join(', ')}`);
  console.log(`${r.seconds} s, ${((r.steps / r.seconds) * 60).toFixed(1)} steps/min`);
  for (const v of r.violations) console.log(`violation at step ${v.step}, ${v.invariant}: ${v.message}`);
  if (r.shortest)
    console.log(`shortest failing prefix: the first ${r.shortest.steps} steps (${r.shortest.violation.invariant}; ${r.shortest.replays} replays)`);
  if (r.keptAt) console.log(`kept: ${r.keptAt} (seed.txt, steps.txt, violations.txt, shortest-prefix.txt, daemon-N.log or daemon-N-dK.log, data-dir.txt)`);
  console.log(`simulate: seed ${r.seed}, ${r.steps} steps, ${r.faults} faults, ${r.checks} invariant checks, ${r.violations.length} violations`);
  return r.violations.length > 0 ? 1 : 0;
}

main()
  .then(
    (code) => (process.exitCode = code),
    (err) => {
      console.error(err);
      process.exitCode = 2;
    },
  )
  .finally(async () => {
    await killAllBcoins();
    await killAllAnvils();
  });
