import path from 'node:path';

/** Files the daemon keeps in its data dir; light to import (the CLI's client commands use it). */
export const adminSocketPath = (dataDir: string): string => path.join(dataDir, 'admin.sock');
export const pidFilePath = (dataDir: string): string => path.join(dataDir, 'coinkeepd.pid');
export const logFilePath = (dataDir: string): string => path.join(dataDir, 'logs', 'coinkeepd.log');

/** The signer's socket when the daemon starts its own (`signer.socket` otherwise). */
export const defaultSignerSocketPath = (dataDir: string): string => path.join(dataDir, 'signer.sock');
/** The signer's record of what it signed toward its hourly limit. */
export const signerJournalPath = (dataDir: string): string => path.join(dataDir, 'signer.journal');
