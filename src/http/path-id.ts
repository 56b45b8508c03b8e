import { notFound } from '../shared/errors';
import { isUuid } from '../shared/ids';

/** A resource id from the path, lower-cased; not an id at all is the same 404 as another account's id. */
export function pathId(raw: string | undefined, what: string): string {
  if (!isUuid(raw)) throw notFound(what);
  return raw.toLowerCase();
}
