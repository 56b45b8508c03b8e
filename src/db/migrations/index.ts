import { Initial1767225600001 } from './0001-initial';
import { Auth1767225600002 } from './0002-auth';

/** Every migration, in order. A new table or column is a new file here; never `synchronize`. */
export const MIGRATIONS = [Initial1767225600001, Auth1767225600002];
