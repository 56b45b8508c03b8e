import type { Command } from 'commander';
import type { VerifyReport } from '../../admin/contract';
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
}
