/**
 * ava's settings. Test files run two at a time, in separate processes (daemons, chains and
 * signals are per process). The slowest files start first (longest-processing-time-first), so
 * that the run does not end with one long file alone on a core; the list is ordered by the wall
 * time each file took in a full run (docs/testing.md says how to measure it again). A file not
 * listed runs after them, in path order; a listed file that is gone is ignored.
 */
const slowestFirst = [
  'test/integration/sim/simulator.test',
  'test/integration/payouts/payout-compliance.test',
  'test/integration/cli/dev-tron.test',
  'test/integration/cli/dev-btc.test',
  'test/integration/cli/team.test',
  'test/integration/cli/lifecycle.test',
  'test/integration/chains/several-daemons.test',
  'test/integration/payouts/withdraw-all-btc.test',
  'test/integration/payouts/tron-payouts.test',
  'test/integration/payouts/btc-coins.test',
  'test/integration/chains/btc/payments.test',
  'test/integration/payouts/payout-proof.test',
  'test/integration/custody/custody-btc.test',
  'test/integration/custody/signer.test',
  'test/integration/chains/btc/block-wait.test',
  'test/integration/payouts/payout-worker.test',
  'test/integration/payouts/evm-token-delivery.test',
  'test/integration/payouts/evm-hosted.test',
  'test/integration/checkout/browser.test',
  'test/integration/ledger/reconcile.test',
  'test/integration/cli/doctor.test',
  'test/integration/webhooks/cli.test',
  'test/integration/cli/pick.test',
  'test/integration/checkout/refund-browser.test',
  'test/integration/chains/btc/crash.test',
  'test/integration/payouts/evm-payout-crash.test',
  'test/integration/transactions/exports.test',
  'test/integration/payouts/payout-crash.test',
  'test/integration/payouts/tron-payout-crash.test',
  'test/integration/refunds/refunds-cli.test',
  'test/integration/payouts/withdraw-all-tron.test',
  'test/integration/auth/replay-restart.test',
  'test/integration/refunds/refund-page-browser.test',
  'test/integration/addresses/btc-api.test',
  'test/integration/auth/replay-flood.test',
  'test/integration/payouts/btc-payout.test',
  'test/integration/ledger/ledger.property.test',
  'test/integration/cli/dev.test',
  'test/integration/wallet/seed.test',
  'test/integration/refunds/refunds-btc.test',
  'test/integration/payouts/evm-payout-trouble.test',
  'test/integration/addresses/postgres.test',
  'test/integration/withdrawals/withdrawals.rules.test',
  'test/integration/withdrawals/review.test',
  'test/integration/chains/node-network.test',
  'test/integration/payouts/evm-fee-models.test',
  'test/integration/withdrawals/withdrawals.api.test',
  'test/integration/house/import-boundaries.test',
];

const rank = (file) => {
  const at = slowestFirst.findIndex((p) => file.endsWith(`dist/${p}.js`));
  return at < 0 ? slowestFirst.length : at;
};

export default {
  files: ['dist/test/unit/**/*.test.js', 'dist/test/integration/**/*.test.js'],
  timeout: '2m',
  concurrency: 2,
  workerThreads: false,
  sortTestFiles: (a, b) => rank(a) - rank(b) || a.localeCompare(b, [], { numeric: true }),
};
