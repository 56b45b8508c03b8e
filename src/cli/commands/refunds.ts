import type { Command } from 'commander';
import { adminCall } from '../admin-client';
import { cliConfig, otpFrom, output } from '../context';
import { confirmAction, pickId } from '../interactive';

type Opts = Record<string, string | boolean | undefined>;

/** One refund on one line: id, status, amount, what it refunds, where it goes (or that it waits for the payer's address). */
const line = (r: any) =>
  `${r.id}  ${String(r.status).padEnd(17)}  ${r.amount} ${r.ticker ?? r.coin_id}  ${r.invoice_id ? `invoice ${r.invoice_id}` : `transaction ${r.transaction_id}`} -> ${r.to_address ?? 'the payer’s address (link sent)'}${r.failure_reason ? `  (${r.failure_reason})` : ''}`;

/** The statuses a refund can be cancelled from: waiting for its address, or its withdrawal before processing. */
const CANCELLABLE = ['awaiting_address', 'pending', 'review', 'awaiting_approval'];

/** `coinkeep refunds list|show|cancel` (PRODUCT §16, issue 33 §3): an account's refunds, read and cancelled by its members. */
export function registerRefundCommands(program: Command): void {
  const call = (cmd: Command, method: 'GET' | 'POST', path: string, body?: Record<string, unknown>) => adminCall(cliConfig(cmd).data_dir, method, path, body);
  const base = (o: Opts) => `/admin/accounts/${encodeURIComponent(String(o.account))}`;
  const asQuery = (o: Opts, extra: Record<string, string> = {}) => `?${new URLSearchParams({ as: String(o.as), ...extra })}`;

  const refunds = program.command('refunds').description("an account's refunds: list, show, cancel");
  refunds
    .command('list')
    .requiredOption('--account <id>')
    .requiredOption('--as <email>', 'the member acting')
    .option('--status <status>', 'only this status (awaiting_address, pending, review, completed, expired, ...)')
    .action(async (o: Opts, cmd: Command) => {
      const r = await call(cmd, 'GET', `${base(o)}/refunds${asQuery(o, o.status ? { status: String(o.status) } : {})}`);
      output(cmd, r, (x) => x.items.map(line).join('\n') || 'no refunds');
    });
  refunds
    .command('show')
    .requiredOption('--account <id>')
    .requiredOption('--as <email>', 'the member acting')
    .argument('<refund-id>')
    .action(async (id: string, o: Opts, cmd: Command) => {
      const r = await call(cmd, 'GET', `${base(o)}/refunds/${encodeURIComponent(id)}${asQuery(o)}`);
      output(cmd, r, (x) => JSON.stringify(x, null, 2));
    });
  refunds
    .command('cancel')
    .description('cancel a refund waiting for its address or before its payout is processed (any member, with OTP)')
    .requiredOption('--account <id>')
    .requiredOption('--as <email>', 'the member acting')
    .option('--otp <code>', 'two-factor code')
    .option('--yes', 'do not ask to confirm on a terminal')
    .argument('[refund-id]', 'on a terminal, left out: pick it from a list')
    .action(async (given: string | undefined, o: Opts, cmd: Command) => {
      const id = await pickId(cmd, given, {
        argument: '<refund-id>',
        title: 'Which refund to cancel?',
        empty: 'no refund is waiting for an address, pending, in review or awaiting approval',
        load: async () =>
          ((await call(cmd, 'GET', `${base(o)}/refunds${asQuery(o)}`)).items as any[])
            .filter((r) => CANCELLABLE.includes(r.status))
            .map((r) => ({ value: r.id, label: line(r) })),
      });
      await confirmAction(cmd, `cancel refund ${id} (its amount may be refunded again)?`, o.yes as boolean | undefined);
      const otp = await otpFrom(cmd, o.otp as string | undefined);
      const r = await call(cmd, 'POST', `${base(o)}/refunds/${encodeURIComponent(id)}/cancel`, { as: o.as, otp });
      output(cmd, r, line);
    });
}
