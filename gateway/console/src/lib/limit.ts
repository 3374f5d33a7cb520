// Requests of one screen that go in parallel, bounded, so a screen that
// asks many things at once does not spend a plan's requests_per_second
// burst in one go.

/** mapLimit calls fn on every item with at most n calls in flight, answering in items' order; the first failure fails it. */
export async function mapLimit<T, R>(items: T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, lane));
  return out;
}
