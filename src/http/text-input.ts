import { validationError } from '../shared/errors';

/**
 * Unicode's bidirectional controls (property Bidi_Control: U+061C, U+200E, U+200F, U+202A–U+202E,
 * U+2066–U+2069). In an order id, a description, a name or metadata they make text read otherwise
 * than it is stored (a reversed amount or address in an export, a dashboard or a log).
 */
const BIDI_CONTROL = /\p{Bidi_Control}/u;
/** U+0000: PostgreSQL's text cannot hold it (the insert would fail), SQLite's would keep it. */
const NUL = '\u0000';

const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/**
 * The rules every JSON body keeps, whatever the route: no key `__proto__` (an object would lose
 * it silently), no bidirectional control and no NUL in any key or string. Walked without recursion, so a
 * deeply nested body costs no stack. `details.field` is the path of the value (`metadata.note`),
 * or of the object whose key is refused.
 */
export function checkTextInput(body: Record<string, unknown>): void {
  const stack: Array<{ value: unknown; path: string }> = [{ value: body, path: '' }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { value, path } = next;
    if (typeof value === 'string') {
      if (BIDI_CONTROL.test(value))
        throw validationError(path, `${path} must not contain bidirectional control characters (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C)`);
      if (value.includes(NUL)) throw validationError(path, `${path} must not contain the NUL character (U+0000)`);
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push({ value: item, path: join(path, String(i)) }));
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (key === '__proto__') throw validationError(join(path, key), '__proto__ is not accepted as a key');
        if (BIDI_CONTROL.test(key))
          throw validationError(path === '' ? 'body' : path, `a key${path === '' ? '' : ` of ${path}`} contains bidirectional control characters`);
        if (key.includes(NUL))
          throw validationError(path === '' ? 'body' : path, `a key${path === '' ? '' : ` of ${path}`} contains the NUL character (U+0000)`);
        stack.push({ value: item, path: join(path, key) });
      }
    }
  }
}
