import { EntitySchema } from 'typeorm';

/** An account's embedding origins: `allowed_origins` is the JSON array PUT /v1/embed kept. */
export interface EmbedOriginsRow {
  account_id: string;
  allowed_origins: string;
  updated_at: string;
}

export const EmbedOriginsEntity = new EntitySchema<EmbedOriginsRow>({
  name: 'EmbedOrigins',
  tableName: 'embed_origins',
  columns: {
    account_id: { type: 'varchar', length: 36, primary: true },
    allowed_origins: { type: 'text' },
    updated_at: { type: 'varchar', length: 30 },
  },
});
