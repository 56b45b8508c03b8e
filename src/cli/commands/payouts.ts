import type { Command } from 'commander';
import type { PayoutCancelResponse } from '../../admin/contract';
import { adminCall } from '../admin-client';
import { cliConfig, otpFrom, output } from '../context';
import { confirmAction } from '../interactive';

type Opts = Record<string, string | boolean | undefined>;

/** `coinkeep payouts cancel` (PRODUCT §14): end a payout that is not mined; `coinkeep status` names the stuck ones. */
export function registerPayoutCommands(program: Command): void {
  const payouts = program.command('payouts').description('payout transactions: cancel one that is not mined (coinkeep status names the stuck ones)');
  payouts
    .command('cancel')
    .description(
      'replace a payout that is not mined with a transaction paying its coins back to the wallet; its withdrawals fail once that is confirmed (owner or admin of the paying account, with OTP)',
    )
    .requiredOption('--as <email>', 'the member acting')
    .option('--otp <code>', 'two-factor code')
    .option('--yes', 'do not ask to confirm on a terminal')
    .argument('<payout-id>', 'as coinkeep status names it')
    .action(async (id: string, o: Opts, cmd: Command) => {
      await confirmAction(
        cmd,
        `cancel payout ${id} (its withdrawals fail once the cancel is confirmed, unless the payout is mined first)?`,
        o.yes as boolean | undefined,
      );
      const otp = await otpFrom(cmd, o.otp as string | undefined);
      const r = (await adminCall(cliConfig(cmd).data_dir, 'POST', `/admin/payouts/${encodeURIComponent(id)}/cancel`, {
        as: o.as,
        otp,
      })) as PayoutCancelResponse;
      output(
        cmd,
        r,
        (x) =>
          `payout ${x.payout.payout_id} cancelling since ${x.payout.cancel_requested_at}: withdrawals ${x.payout.withdrawal_ids.join(', ')} fail once the cancel is confirmed`,
      );
    });
}
