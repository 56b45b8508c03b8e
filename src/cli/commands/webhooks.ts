import type { Command } from 'commander';
import type { CallbackSecretResponse, DeliveryPage, DeliveryResponse, DeliveryView, ReplayExhaustedResponse } from '../../admin/contract';
import { UserError } from '../../shared/errors';
import { adminCall } from '../admin-client';
import { cliConfig, output, wholeNumber } from '../context';
import { pickId } from '../interactive';

type Opts = Record<string, string | boolean | undefined>;

const showDelivery = (d: DeliveryView): string =>
  [
    `${d.id}  ${d.status.padEnd(9)}  ${d.event_type}  attempts ${d.attempts}  ${d.created_at}`,
    `  to ${d.endpoint_id ? `endpoint ${d.endpoint_id}` : 'invoice webhook_url'}: ${d.url}`,
    ...(d.last_error ? [`  last error: ${d.last_error}`] : []),
    ...(d.next_attempt_at ? [`  next attempt: ${d.next_attempt_at}`] : []),
  ].join('\n');

/** `coinkeep webhooks deliveries|replay|ping|secret` (PRODUCT §12, issue 7 §4), through the admin socket. */
export function registerWebhookCommands(program: Command): void {
  const call = <T>(cmd: Command, method: 'GET' | 'POST', path: string, body?: Record<string, unknown>) =>
    adminCall<T>(cliConfig(cmd).data_dir, method, path, body);
  const base = (o: Opts) => `/admin/accounts/${encodeURIComponent(String(o.account))}/webhooks`;
  const webhooks = program.command('webhooks').description("an account's webhook deliveries and invoice-callback secret");

  webhooks
    .command('deliveries')
    .description('the delivery log, newest first')
    .requiredOption('--account <id>')
    .option('--status <status>', 'pending, succeeded, failed or exhausted')
    .option('--event-type <type>')
    .option('--endpoint <id>', 'deliveries to this endpoint only')
    .option('--limit <n>', 'how many (1 to 100)', '20')
    .option('--cursor <cursor>', 'the next page (next_cursor of the last one)')
    .action(async (o: Opts, cmd: Command) => {
      const q = new URLSearchParams({ limit: String(wholeNumber('--limit', o.limit)) });
      if (o.status) q.set('status', String(o.status));
      if (o.eventType) q.set('event_type', String(o.eventType));
      if (o.endpoint) q.set('endpoint_id', String(o.endpoint));
      if (o.cursor) q.set('cursor', String(o.cursor));
      const r = await call<DeliveryPage>(cmd, 'GET', `${base(o)}/deliveries?${q}`);
      output(cmd, r, (x: typeof r) =>
        [...x.items.map(showDelivery), ...(x.next_cursor ? [`more: --cursor ${x.next_cursor}`] : []), ...(x.items.length ? [] : ['no deliveries'])].join('\n'),
      );
    });

  webhooks
    .command('replay')
    .description('resend a delivery now with a fresh schedule, or every exhausted one since a time')
    .requiredOption('--account <id>')
    .argument('[delivery_id]')
    .option('--all-exhausted', 'every exhausted delivery created since --since')
    .option('--since <time>', 'RFC 3339 time, with --all-exhausted')
    .action(async (deliveryId: string | undefined, o: Opts, cmd: Command) => {
      if (o.allExhausted) {
        if (deliveryId !== undefined) throw new UserError('replay: give a delivery id or --all-exhausted, not both');
        if (!o.since) throw new UserError('replay --all-exhausted needs --since TIME (RFC 3339)');
        const r = await call<ReplayExhaustedResponse>(cmd, 'POST', `${base(o)}/deliveries/replay-exhausted`, { since: o.since });
        return output(cmd, r, (x: typeof r) => `${x.replayed} exhausted deliveries queued to be sent again`);
      }
      const id = await pickId(cmd, deliveryId, {
        argument: '<delivery_id> (or --all-exhausted --since TIME)',
        title: 'Which delivery to send again?',
        empty: 'no failed or exhausted delivery',
        load: async () => {
          const items: DeliveryView[] = [];
          for (const status of ['exhausted', 'failed'])
            items.push(...(await call<DeliveryPage>(cmd, 'GET', `${base(o)}/deliveries?status=${status}&limit=50`)).items);
          return items.map((d) => ({ value: d.id, label: `${d.id}  ${d.status.padEnd(9)}  ${d.event_type}  ${d.last_error ?? ''}` }));
        },
      });
      const r = await call<DeliveryResponse>(cmd, 'POST', `${base(o)}/deliveries/${encodeURIComponent(id)}/replay`);
      output(cmd, r, (x: typeof r) => `queued to be sent again\n${showDelivery(x.delivery)}`);
    });

  webhooks
    .command('ping')
    .description('send a signed ping event to one endpoint')
    .requiredOption('--account <id>')
    .argument('<endpoint_id>')
    .option('--message <text>', 'the message in the ping', 'ping')
    .action(async (endpointId: string, o: Opts, cmd: Command) => {
      const r = await call<DeliveryResponse>(cmd, 'POST', `${base(o)}/endpoints/${encodeURIComponent(endpointId)}/ping`, { message: o.message });
      output(cmd, r, (x: typeof r) => `ping sent as event ${x.delivery.event_id}\n${showDelivery(x.delivery)}`);
    });

  webhooks
    .command('secret')
    .description("the account's invoice-callback secret, which signs deliveries to invoices' own webhook_url")
    .requiredOption('--account <id>')
    .option('--rotate', 'replace it now; the old one stops signing at once')
    .action(async (o: Opts, cmd: Command) => {
      const r = await call<CallbackSecretResponse>(cmd, 'POST', `${base(o)}/callback-secret`, { rotate: Boolean(o.rotate) });
      output(
        cmd,
        r,
        (x: typeof r) =>
          `invoice-callback secret: ${x.callback_secret.secret}\n  (since ${x.callback_secret.updated_at}; keep it on the receiving server only)`,
      );
    });
}
