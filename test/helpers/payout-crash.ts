import type { ExecutionContext } from 'ava';
import { SignedClient } from './api-client';
import type { CliEnv } from './cli';
import { pastStartSecond } from './cli';
import { until } from './payout-fixture';

/** Where a daemon kills itself around a payout (CliEnv.spawnCrashingDaemon): once it is stored, once its bytes went to the node. */
export type CrashPoint = 'stored' | 'sent';

/**
 * kill -9 around a payout's broadcast, at each crash point in turn: a coinkeepd of `env` that kills
 * itself there takes a withdrawal (`body` for a new payee), `killed` checks what reached the node,
 * and a restarted daemon completes the withdrawal while `mine` makes a block each poll. The payees,
 * in order.
 */
export async function payoutAcrossKills(
  t: ExecutionContext,
  env: CliEnv,
  key: { key_id: string; secret: string },
  opts: { payee: () => string; body: (to: string) => Record<string, unknown>; killed: (point: CrashPoint) => unknown; mine: () => unknown; timeoutMs?: number },
): Promise<string[]> {
  const payees: string[] = [];
  for (const point of ['stored', 'sent'] as const) {
    const dying = await env.spawnCrashingDaemon(point);
    // After a crash the daemon refuses every signature stamped up to the second it started in.
    await pastStartSecond();
    const to = opts.payee();
    payees.push(to);
    const w = await new SignedClient(dying.url, key.key_id, key.secret).post('/v1/withdrawals', opts.body(to), {
      headers: { 'Content-Type': 'application/json' },
    });
    t.is(w.status, 201, w.text);
    t.is((await dying.child.exited).signal, 'SIGKILL', `killed itself ${point}`);
    await opts.killed(point);

    const again = await env.spawnDaemon();
    await pastStartSecond();
    const api = new SignedClient(again.url, key.key_id, key.secret);
    await until(
      async () => {
        await opts.mine();
        return (await api.get(`/v1/withdrawals/${w.json.id}`)).json.status === 'completed';
      },
      `the withdrawal killed ${point} completed`,
      opts.timeoutMs ?? 60_000,
    );
    again.child.child.kill('SIGTERM');
    await again.child.exited;
  }
  return payees;
}
