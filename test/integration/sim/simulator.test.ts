/**
 * The simulator can fail (issue 34 §2): with each planted bug (test/sim/planted-bugs.ts, reached
 * only through the simulator's own daemon entry) a short run on a fixed seed reports a violation
 * of the invariant that should catch it, within a bounded number of steps. And a fixed seed with
 * no bug runs about a minute of operations and faults with no violation.
 */
import test from 'ava';
import { killAllAnvils } from '../../helpers/anvil';
import { killAllBcoins } from '../../helpers/bcoin';
import { PLANTS, type PlantName } from '../../sim/planted-bugs';
import { simulate } from '../../sim/simulator';

test.after.always(async () => {
  await killAllBcoins();
  await killAllAnvils();
});

/** Steps within which each planted bug must be caught on its seed. */
const BOUND = 30;

for (const plant of Object.keys(PLANTS) as PlantName[]) {
  test.serial(`planted bug ${plant}: the ${PLANTS[plant]} invariant catches it within ${BOUND} steps`, async (t) => {
    t.timeout(180_000);
    const r = await simulate({ seed: 3, maxSteps: BOUND, plant, stopOnViolation: true, quietEvery: 10, keep: false });
    t.log(`simulate: seed ${r.seed}, ${r.steps} steps, ${r.faults} faults, ${r.checks} invariant checks, ${r.violations.length} violations`);
    t.true(r.violations.length > 0, `no violation in ${r.steps} steps`);
    t.is(r.violations[0]!.invariant, PLANTS[plant], r.violations.map((v) => `#${v.step} ${v.invariant}: ${v.message}`).join('\n'));
  });
}

test.serial('a fixed seed with no planted bug: a minute of operations and faults, every invariant holds', async (t) => {
  t.timeout(240_000);
  const r = await simulate({ seed: 20261128, minutes: 0.75, keep: false });
  t.log(`simulate: seed ${r.seed}, ${r.steps} steps, ${r.faults} faults, ${r.checks} invariant checks, ${r.violations.length} violations`);
  t.deepEqual(
    r.violations.map((v) => `#${v.step} ${v.invariant}: ${v.message}`),
    [],
  );
  t.true(r.steps >= 20, `${r.steps} steps`);
  t.true(r.faults > 0);
});
