import test from 'ava';
import { approverRefusal, ROLE_SETTLING_MS, type ApprovalCase } from '../../../src/withdrawals/approver-rule';

const NOW = new Date('2026-03-02T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();

/** An admin the operator added long ago, who neither holds the key nor changed anything. */
const approval = (over: Partial<ApprovalCase> = {}, approver: Partial<ApprovalCase['approver']> = {}): ApprovalCase => ({
  approver: { id: 'm-admin', email: 'admin@shop.test', role_granted_at: ago(3 * ROLE_SETTLING_MS), role_granted_by: null, ...approver },
  keyHolders: ['m-owner', 'm-owner', null],
  changedBy: [],
  now: NOW,
  ...over,
});

test('an owner or admin who holds no secret of the key, made no change and holds the role long enough approves', (t) => {
  t.is(approverRefusal(approval()), null);
});

test('the member who created the requesting key, holds its secret or held its previous one may not approve (approver_created_key)', (t) => {
  for (const holders of [
    ['m-admin', 'm-owner', null],
    ['m-owner', 'm-admin', null],
    ['m-owner', 'm-owner', 'm-admin'],
  ]) {
    t.is(approverRefusal(approval({ keyHolders: holders })), 'approver_created_key', holders.join(','));
  }
});

test('the member whose security change sent a withdrawal to review may not approve it (approver_made_change)', (t) => {
  t.is(approverRefusal(approval({ changedBy: ['operator', 'admin@shop.test'] })), 'approver_made_change');
  t.is(approverRefusal(approval({ changedBy: ['operator', 'other@shop.test'] })), null);
});

test('a member another member added or promoted approves only after holding the role 24 hours (approver_role_too_new)', (t) => {
  const byOwner = { role_granted_by: 'm-owner' };
  t.is(approverRefusal(approval({}, { ...byOwner, role_granted_at: ago(0) })), 'approver_role_too_new', 'at once: the adder holds their TOTP secret');
  t.is(approverRefusal(approval({}, { ...byOwner, role_granted_at: ago(ROLE_SETTLING_MS - 1) })), 'approver_role_too_new');
  t.is(approverRefusal(approval({}, { ...byOwner, role_granted_at: ago(ROLE_SETTLING_MS) })), null, '24 hours on');
});

test('a member the operator added or promoted, or one from before grants were recorded, approves at once', (t) => {
  t.is(approverRefusal(approval({}, { role_granted_by: null, role_granted_at: ago(0) })), null);
  t.is(approverRefusal(approval({}, { role_granted_by: null, role_granted_at: null })), null);
});
