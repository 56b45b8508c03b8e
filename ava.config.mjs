/**
 * ava's settings. Test files run three at a time, in separate processes (daemons, chains and
 * signals are per process): on this 2-core machine many files wait on confirmations, polls or a
 * fresh two-factor step, so two at a time left a third of the CPU idle (idle run, 2026-11-29:
 * 2 at a time 783 s, 3 at a time 560 s, 4 at a time 618 s: the cores saturate and every file
 * slows). The slowest files start first (longest-processing-time-first), so that the run does not
 * end with one long file alone on a core; the list is ordered by the wall time each file took in a
 * full run (docs/testing.md says how to measure it again). A file not listed runs after them, in
 * path order; a listed file that is gone is ignored.
 */
const slowestFirst = [
  'test/integration/sim/simulator.test',
  'test/integration/cli/dev-tron.test',
  'test/integration/cli/dev.test',
  'test/integration/cli/team.test',
  'test/integration/payouts/payout-compliance.test',
  'test/integration/dashboard/dashboard.test',
  'test/integration/payouts/evm-hosted.test',
  'test/integration/cli/dev-btc.test',
  'test/integration/payouts/withdraw-all-btc.test',
  'test/integration/refunds/refunds-cli.test',
  'test/integration/cli/lifecycle.test',
  'test/integration/payouts/tron-payout-crash.test',
  'test/integration/payouts/payout-crash.test',
  'test/integration/chains/several-daemons.test',
  'test/integration/transactions/exports.test',
  'test/integration/checkout/refund-browser.test',
  'test/integration/chains/btc/payments.test',
  'test/integration/payouts/evm-payout-crash.test',
  'test/integration/chains/btc/crash.test',
  'test/integration/withdrawals/member-cancel.test',
  'test/integration/payouts/btc-coins.test',
  'test/integration/payouts/withdraw-all-tron.test',
  'test/integration/payouts/payout-worker.test',
  'test/integration/payouts/payout-proof.test',
  'test/integration/refunds/refund-page-browser.test',
  'test/integration/payouts/tron-payouts.test',
  'test/integration/webhooks/cli.test',
  'test/integration/checkout/browser.test',
  'test/integration/webhooks/delivery.test',
  'test/integration/chains/btc/block-wait.test',
  'test/integration/custody/signer.test',
  'test/integration/wallet/seed.test',
  'test/integration/custody/custody-btc.test',
  'test/integration/dashboard/snapshot.test',
  'test/integration/auth/replay-restart.test',
  'test/integration/payouts/evm-payout-trouble.test',
  'test/integration/payouts/tron-payout-expiry.test',
  'test/integration/refunds/refunds-btc.test',
  'test/integration/ledger/reconcile.test',
  'test/integration/cli/pick.test',
  'test/integration/cli/doctor.test',
  'test/integration/clients/go.test',
  'test/integration/chains/evm/crash.test',
  'test/integration/chains/tron/aligned-poll.test',
  'test/integration/ledger/ledger.property.test',
  'test/integration/withdrawals/review.test',
  'test/integration/webhooks/schedule.test',
  'test/integration/chains/evm/head-push-liveness.test',
  'test/integration/addresses/btc-api.test',
  'test/integration/payouts/evm-hidden-send.test',
  'test/integration/webhooks/dns.test',
  'test/integration/strays/strays.test',
  'test/integration/payouts/btc-payout.test',
  'test/integration/withdrawals/withdrawals.rules.test',
  'test/integration/payouts/payout-postgres.test',
  'test/integration/addresses/postgres.test',
  'test/integration/payouts/evm-fee-models.test',
  'test/integration/payouts/evm-token-delivery.test',
  'test/integration/http/idempotency-invoices.test',
  'test/integration/chains/evm/payments.test',
];

const rank = (file) => {
  const at = slowestFirst.findIndex((p) => file.endsWith(`dist/${p}.js`));
  return at < 0 ? slowestFirst.length : at;
};

export default {
  files: ['dist/test/unit/**/*.test.js', 'dist/test/integration/**/*.test.js'],
  timeout: '2m',
  concurrency: 3,
  workerThreads: false,
  // Source maps for this project's files only: see test/helpers/own-source-maps.ts.
  require: ['./dist/test/helpers/own-source-maps.js'],
  sortTestFiles: (a, b) => rank(a) - rank(b) || a.localeCompare(b, [], { numeric: true }),
};
