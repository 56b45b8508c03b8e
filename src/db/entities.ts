import { ApiKeyEntity, IdempotencyEntity, ReplayEntity } from './entities/auth';
import { AccountEntity, MemberEntity, MetaEntity, SecurityLogEntity } from './entities/team';

/** Every entity schema of the store; migrations create the same tables. */
export const ENTITIES = [MetaEntity, AccountEntity, MemberEntity, SecurityLogEntity, ApiKeyEntity, IdempotencyEntity, ReplayEntity];
