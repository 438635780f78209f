// One page of a list: the rows in the window and the total of the whole list, read side by side.

/** The window a list operation asks for (`offset`, `limit` of every list input). */
export interface PageWindow {
  offset: number;
  limit: number;
}

/** A page as the list operations answer it. */
export interface Page<Item> {
  data: Item[];
  total_count: number;
}

/**
 * Reads the rows in the window (`find` gets Prisma's `skip` and `take`) and the total (`count`)
 * concurrently, and maps each row. `find` owns the `where` and the order; `count` must use the same
 * `where`, so that the total is the list's.
 */
export async function pageOf<Row, Item>(
  window: PageWindow,
  find: (slice: { skip: number; take: number }) => PromiseLike<Row[]>,
  count: () => PromiseLike<number>,
  item: (row: Row) => Item,
): Promise<Page<Item>> {
  const [rows, total] = await Promise.all([find({ skip: window.offset, take: window.limit }), count()]);
  return { data: rows.map((row) => item(row)), total_count: total };
}
