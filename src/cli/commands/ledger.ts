import type { Command } from 'commander';
import type { ReconcileReport, VerifyReport } from '../../admin/contract';
import { UserError } from '../../shared/errors';
import { adminCall } from '../admin-client';
import { cliConfig, output } from '../context';

/** Every difference and problem of a report, one line each. */
export function describeReport(r: VerifyReport): string[] {
  return [
    ...r.differences.map((d) => `difference: ${d.book} ${d.coin_id} ${d.field}: journal ${d.journal}, cached ${d.cached}`),
    ...r.problems.map((p) => `problem: entry ${p.entry_id}: ${p.problem}`),
  ];
}

/** `coinkeep ledger verify` (issue 4 §1): exit code 0 only when the books match the journal. */
export function registerLedgerCommands(program: Command): void {
  const ledger = program.command('ledger').description('the journal and its balances');
  ledger
    .command('verify')
    .description('recompute every balance from the journal and compare it with the cached balances')
    .action(async (_o: unknown, cmd: Command) => {
      // A large journal takes a while: give the daemon up to 10 minutes.
      const r = await adminCall<VerifyReport>(cliConfig(cmd).data_dir, 'GET', '/admin/ledger/verify', undefined, 600_000);
      const lines = describeReport(r);
      output(cmd, r, (x: VerifyReport) =>
        [...lines, `${x.entries} entries, ${x.balances} balances: ${x.ok ? 'the ledger matches its journal' : 'MISMATCH'}`].join('\n'),
      );
      if (!r.ok) {
        throw new UserError(`ledger verify: ${r.differences.length} difference(s), ${r.problems.length} problem(s); first: ${lines[0]}`);
      }
    });

  ledger
    .command('reconcile')
    .description('per coin, what the books say the wallet holds against what the node shows at its outputs and addresses')
    .action(async (_o: unknown, cmd: Command) => {
      const r = await adminCall<ReconcileReport>(cliConfig(cmd).data_dir, 'GET', '/admin/ledger/reconcile', undefined, 600_000);
      output(cmd, r, reconcileTable);
      const bad = r.coins.filter((c) => c.status === 'difference' || c.status === 'unavailable');
      if (bad.length > 0) {
        throw new UserError(
          `ledger reconcile: ${bad.map((c) => `${c.ticker} on ${c.chain_id} ${c.status === 'difference' ? `differs by ${c.difference}` : `unavailable (${c.error})`}`).join('; ')}`,
        );
      }
    });
}

/** The report as a table, one coin a line, and what an `in_flight` line means. */
function reconcileTable(r: ReconcileReport): string {
  const head = ['COIN', 'CHAIN', 'BOOKS', 'UNCREDITED_IN', 'IN_FLIGHT_OUT', 'IN_FLIGHT_IN', 'NODE', 'DIFFERENCE', 'STATUS'];
  const rows = r.coins.map((c) => [
    c.ticker,
    c.chain_id,
    c.books,
    c.uncredited_in,
    c.in_flight_out,
    c.in_flight_in,
    c.node ?? '-',
    c.difference ?? '-',
    c.status,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const out = [line(head), ...rows.map(line)];
  if (r.coins.some((c) => c.status === 'in_flight'))
    out.push('', 'in_flight: the chain shows less (or more) by no more than what is on its way out (or in) and not yet booked; run it again once it is.');
  out.push('', r.ok ? 'the books match the chains' : 'DIFFERENCE');
  return out.join('\n');
}
