/**
 * The simulator can fail (issue 34 §2): with each planted bug (test/sim/planted-bugs.ts, reached
 * only through the simulator's own daemon entry) a short run on a fixed seed reports a violation
 * of the invariant that should catch it, within a bounded number of steps. And two fixed seeds with
 * no bug run about a minute of operations and faults each with no violation (§3).
 *
 * Each run has its own bcoin, anvil, webhook sink and daemon (one wallet's addresses on two nodes
 * would be two wallets' coins; no chain is shared), so the runs go concurrently, a few at a time.
 */
import test from 'ava';
import { killAllAnvils } from '../../helpers/anvil';
import { killAllBcoins } from '../../helpers/bcoin';
import { PLANTS, type PlantName } from '../../sim/planted-bugs';
import { simulate, type SimOptions, type SimResult } from '../../sim/simulator';

test.after.always(async () => {
  await killAllBcoins();
  await killAllAnvils();
});

/** Simulations at once: each is a bcoin, an anvil and a daemon; more than this only queue on two cores. */
const LANES = 4;
let running = 0;
const waiting: Array<() => void> = [];
async function inLane<T>(work: () => Promise<T>): Promise<T> {
  if (running >= LANES) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

const line = (r: SimResult) =>
  `simulate: seed ${r.seed}, ${r.steps} steps, ${r.faults} faults, ${r.checks} invariant checks, ${r.violations.length} violations (${r.seconds} s)`;

/** Steps within which each planted bug must be caught on its seed. */
const BOUND = 45;

/** What each planted bug's run makes frequent: the fault (or the checkpoint) its bug needs to show. */
const FOCUS: Record<PlantName, Pick<SimOptions, 'emphasis' | 'checkpoints' | 'withdrawCoins'>> = {
  'unguarded-credit': {},
  // A refund cancelled while it waits for the payer's address releases its hold: every such cancel shows the bug (no race with a worker).
  'double-release': { emphasis: { refund_cancel: 20 } },
  'drop-outbox-row': {},
  'fail-on-unknown': { emphasis: { node_unknown: 30 } },
  // Bitcoin signs a lost payout again byte for byte (same coins, same change address): harmless. An
  // EVM payout signed again takes the treasury's next nonce after the lost one, and pays twice.
  'broadcast-before-store': { emphasis: { restart_crash_at_checkpoint: 15, withdraw: 20 }, checkpoints: ['signed'], withdrawCoins: ['ETH', 'USDT'] },
  'stray-credited-on-sight': { emphasis: { pay_wrong_network: 15 } },
};

for (const plant of Object.keys(PLANTS) as PlantName[]) {
  test(`planted bug ${plant}: the ${PLANTS[plant]} invariant catches it within ${BOUND} steps`, async (t) => {
    t.timeout(420_000);
    const r = await inLane(() => simulate({ seed: 3, maxSteps: BOUND, plant, stopOnViolation: true, quietEvery: 5, keep: false, ...FOCUS[plant] }));
    t.log(line(r));
    t.true(r.violations.length > 0, `no violation in ${r.steps} steps`);
    // The run stops after the step of its first violation: the bug's invariant is among that step's.
    t.true(
      r.violations.some((v) => v.invariant === PLANTS[plant]),
      r.violations.map((v) => `#${v.step} ${v.invariant}: ${v.message}`).join('\n'),
    );
  });
}

for (const seed of [20261128, 20261129]) {
  test(`fixed seed ${seed} with no planted bug: a minute of operations and faults, every invariant holds`, async (t) => {
    t.timeout(420_000);
    const r = await inLane(() => simulate({ seed, minutes: 1, keep: false }));
    t.log(line(r));
    t.deepEqual(
      r.violations.map((v) => `#${v.step} ${v.invariant}: ${v.message}`),
      [],
    );
    t.true(r.steps >= 5, `${r.steps} steps`);
    t.true(r.faults > 0);
  });
}

/**
 * `--postgres`: two daemons on one fresh PostgreSQL database, the requests spread over both, the
 * kills (made frequent here) hitting one while the other serves. Kept short: the clean seeds above
 * are the long runs.
 */
test('PostgreSQL, two daemons on one database: a short fixed seed, requests and kills spread over both, every invariant holds', async (t) => {
  // Two daemons and their restarts on one database: as long as the other runs of this file get, for a loaded machine.
  t.timeout(420_000);
  const emphasis = { kill9: 6, kill9_mid_request: 6 };
  const r = await inLane(() => simulate({ seed: 20261130, maxSteps: 15, quietEvery: 100, postgres: true, keep: false, emphasis }));
  t.log(`${line(r)}; requests by daemon ${r.requestsByDaemon.join(', ')}`);
  t.deepEqual(
    r.violations.map((v) => `#${v.step} ${v.invariant}: ${v.message}`),
    [],
  );
  t.is(r.requestsByDaemon.length, 2);
  t.true(
    r.requestsByDaemon.every((n) => n > 0),
    'both daemons served',
  );
  t.true((r.faultsByKind.kill9 ?? 0) + (r.faultsByKind.kill9_mid_request ?? 0) > 0, JSON.stringify(r.faultsByKind));
});
