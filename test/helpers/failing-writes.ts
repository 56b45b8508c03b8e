import type { Store } from '../../src/db/store';

/** The store's next `times` write transactions fail, as a full disk or a lost connection would. */
export function failNextWrites(store: Store, times: number): void {
  const write = store.write.bind(store);
  let left = times;
  store.write = (<T>(_fn: Parameters<typeof write<T>>[0]): Promise<T> => {
    if (--left === 0) store.write = write;
    return Promise.reject(new Error('disk I/O error'));
  }) as typeof store.write;
}
