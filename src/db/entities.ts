import { ApiKeyEntity, IdempotencyEntity, ReplayEntity } from './entities/auth';
import { AddressEntity, ChainTransferEntity } from './entities/chain';
import { ChainBlockEntity, ChainCursorEntity } from './entities/chain-scan';
import { CustodyForwardEntity, CustodyRuleEntity } from './entities/custody';
import { EmbedOriginsEntity } from './entities/embed';
import { EventEntity } from './entities/events';
import { InvoiceEntity, LedgerBalanceEntity, LedgerEntryEntity, TransactionEntity } from './entities/money';
import { StaticAddressEntity } from './entities/static-address';
import { RefundEntity } from './entities/refund';
import { StrayEntity } from './entities/stray';
import { AccountEntity, MemberEntity, MetaEntity, SecurityLogEntity } from './entities/team';
import { WhitelistEntryEntity, WithdrawalEntity, WithdrawalKeyEntity } from './entities/withdrawals';
import { WalletBranchEntity, WalletCounterEntity } from './entities/wallet';
import { CallbackSecretEntity, WebhookAttemptEntity, WebhookDeliveryEntity, WebhookEndpointEntity } from './entities/webhooks';

/** Every entity schema of the store; migrations create the same tables. */
export const ENTITIES = [
  MetaEntity,
  AccountEntity,
  MemberEntity,
  SecurityLogEntity,
  ApiKeyEntity,
  IdempotencyEntity,
  ReplayEntity,
  AddressEntity,
  ChainTransferEntity,
  ChainCursorEntity,
  ChainBlockEntity,
  EventEntity,
  LedgerEntryEntity,
  LedgerBalanceEntity,
  InvoiceEntity,
  TransactionEntity,
  WalletBranchEntity,
  WalletCounterEntity,
  WebhookEndpointEntity,
  WebhookDeliveryEntity,
  WebhookAttemptEntity,
  CallbackSecretEntity,
  StaticAddressEntity,
  StrayEntity,
  RefundEntity,
  EmbedOriginsEntity,
  WithdrawalEntity,
  WithdrawalKeyEntity,
  WhitelistEntryEntity,
  CustodyRuleEntity,
  CustodyForwardEntity,
];
