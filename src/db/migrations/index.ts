import { Initial1767225600001 } from './0001-initial';
import { Auth1767225600002 } from './0002-auth';
import { Core1767225600003 } from './0003-core';
import { Money1767225600004 } from './0004-money';
import { Wallet1767225600005 } from './0005-wallet';
import { Chains1767225600006 } from './0006-chains';
import { Webhooks1767225600008 } from './0008-webhooks';
import { OpenIndexes1767225600009 } from './0009-open-indexes';
import { MoneyPath1767225600013 } from './0013-money-path';
import { Withdrawals1767225600016 } from './0016-withdrawals';
import { CoinReservations1767225600017 } from './0017-coin-reservations';
import { StaticAddresses1767225600018 } from './0018-static-addresses';
import { EmbedOrigins1767225600020 } from './0020-embed-origins';
import { Payouts1767225600021 } from './0021-payouts';
import { PayoutFeeBooked1767225600022 } from './0022-payout-fee-booked';
import { EvmSends1767225600023 } from './0023-evm-sends';
import { KeyLastUsed1767225600024 } from './0024-key-last-used';
import { ArchivedScanAndSearch1767225600025 } from './0025-archived-scan-and-search';
import { TronSends1767225600026 } from './0026-tron-sends';
import { ArchivedScanAddressSearchMerge1767225600028 } from './0028-archived-scan-address';
import { WithdrawalSpeed1767225600029 } from './0029-withdrawal-speed';
import { ArchivedScanPages1767225600030 } from './0030-archived-scan-pages';
import { PayoutProof1767225600031 } from './0031-payout-proof';
import { MemberRoleGrant1767225600032 } from './0032-member-role-grant';
import { SweepRequests1767225600033 } from './0033-sweep-requests';
import { ExactDayTotals1767225600034 } from './0034-exact-day-totals';
import { AccountSends1767225600035 } from './0035-account-sends';
import { Strays1767225600036 } from './0036-strays';
import { Refunds1767225600037 } from './0037-refunds';
import { Custody1767225600039 } from './0039-custody';

/** Every migration, in order. A new table or column is a new file here; never `synchronize`. */
export const MIGRATIONS = [
  Initial1767225600001,
  Auth1767225600002,
  Core1767225600003,
  Money1767225600004,
  Wallet1767225600005,
  Chains1767225600006,
  Webhooks1767225600008,
  OpenIndexes1767225600009,
  MoneyPath1767225600013,
  Withdrawals1767225600016,
  CoinReservations1767225600017,
  StaticAddresses1767225600018,
  EmbedOrigins1767225600020,
  Payouts1767225600021,
  PayoutFeeBooked1767225600022,
  EvmSends1767225600023,
  KeyLastUsed1767225600024,
  ArchivedScanAndSearch1767225600025,
  TronSends1767225600026,
  ArchivedScanAddressSearchMerge1767225600028,
  WithdrawalSpeed1767225600029,
  ArchivedScanPages1767225600030,
  PayoutProof1767225600031,
  MemberRoleGrant1767225600032,
  SweepRequests1767225600033,
  ExactDayTotals1767225600034,
  AccountSends1767225600035,
  Strays1767225600036,
  Refunds1767225600037,
  Custody1767225600039,
];
