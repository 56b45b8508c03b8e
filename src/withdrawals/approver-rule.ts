import type { MemberRow } from '../db/entities/team';

/** How long a member added or promoted by another member holds their role before their approval counts. */
export const ROLE_SETTLING_MS = 24 * 3600 * 1000;

/** Which of PRODUCT §14's approver rules an approval breaks (`details.reason` of its refusal). */
export type ApproverRefusal = 'approver_created_key' | 'approver_made_change' | 'approver_role_too_new';

export interface ApprovalCase {
  approver: Pick<MemberRow, 'id' | 'email' | 'role_granted_at' | 'role_granted_by'>;
  /** Members who held the secret of the key that created the withdrawal: they could have signed it. */
  keyHolders: ReadonlyArray<string | null>;
  /** For a `pattern` review: who made the security changes that sent it there (security-log actors). */
  changedBy: readonly string[];
  now: Date;
}

export const REFUSAL_MESSAGES: Readonly<Record<ApproverRefusal, string>> = {
  approver_created_key: "the approval must come from a member other than the holder of the requesting key's secret",
  approver_made_change: 'the approval must come from a member other than the one whose security change sent it to review',
  approver_role_too_new: 'a member added or promoted by another member approves only after holding the role for 24 hours',
};

/**
 * PRODUCT §14: a dual approval or a review approval counts only from a second person: not one who
 * could have signed the withdrawal, not the one whose change caused its review, and not a member
 * another member made an owner or admin less than 24 hours ago (whoever adds a member holds their
 * TOTP secret at that moment). The operator's grants count at once. Null when the approval counts.
 */
export function approverRefusal(c: ApprovalCase): ApproverRefusal | null {
  if (c.keyHolders.includes(c.approver.id)) return 'approver_created_key';
  if (c.changedBy.includes(c.approver.email)) return 'approver_made_change';
  const { role_granted_by: by, role_granted_at: at } = c.approver;
  if (by !== null && at !== null && c.now.getTime() - Date.parse(at) < ROLE_SETTLING_MS) return 'approver_role_too_new';
  return null;
}
