import { TransactionEntity } from '../../src/db/entities/money';
import { MemberEntity, SecurityLogEntity } from '../../src/db/entities/team';
import { WithdrawalEntity } from '../../src/db/entities/withdrawals';
import type { TestDaemon } from './daemon';
import type { WithdrawalFixture } from './withdrawal-fixture';

/** The types of a withdrawal's events, oldest first. */
export const eventTypes = async (f: { td: TestDaemon }, id: string): Promise<string[]> =>
  (await f.td.daemon.store.read.query(`SELECT type FROM events WHERE object_id = '${id}' ORDER BY seq`)).map((e: { type: string }) => e.type);

/**
 * What a refused decision or cancel must leave as it was: the withdrawal, its hold, the balance,
 * its events, the security log, and the acting member's last accepted two-factor step.
 */
export async function withdrawalPicture(f: WithdrawalFixture, id: string, actor: string) {
  const store = f.td.daemon.store.read;
  return {
    withdrawal: await store.findOneBy(WithdrawalEntity, { id }),
    hold: (await store.findOneBy(TransactionEntity, { withdrawal_id: id, type: 'withdrawal' }))?.status,
    balance: await f.balance(),
    events: await eventTypes(f, id),
    log: await store.countBy(SecurityLogEntity, { account_id: f.accountId }),
    actorCode: (await store.findOneBy(MemberEntity, { account_id: f.accountId, email: actor }))?.totp_last_step,
  };
}
