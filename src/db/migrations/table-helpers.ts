import { TableColumnOptions } from 'typeorm';

/** Column shorthands shared by migrations, portable across SQLite and PostgreSQL. */
export const col = {
  id: (name = 'id'): TableColumnOptions => ({ name, type: 'varchar', length: '36', isPrimary: true }),
  ref: (name: string, nullable = false): TableColumnOptions => ({ name, type: 'varchar', length: '36', isNullable: nullable }),
  str: (name: string, length: number, nullable = false): TableColumnOptions => ({ name, type: 'varchar', length: String(length), isNullable: nullable }),
  text: (name: string, nullable = false): TableColumnOptions => ({ name, type: 'text', isNullable: nullable }),
  int: (name: string, nullable = false): TableColumnOptions => ({ name, type: 'integer', isNullable: nullable }),
  bool: (name: string): TableColumnOptions => ({ name, type: 'boolean' }),
  /** Timestamps are RFC 3339 UTC text with milliseconds: they sort as text on both dialects. */
  time: (name: string, nullable = false): TableColumnOptions => ({ name, type: 'varchar', length: '30', isNullable: nullable }),
};
