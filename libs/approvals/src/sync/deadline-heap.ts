/** An entry of the heap: it remembers its own slot, so removal is O(log n) without a search. */
export interface HeapEntry {
  readonly deadline: number;
  heapIndex: number;
}

/**
 * A binary min-heap ordered by `deadline`, with removal of any entry by its stored index.
 * The long-poll hub keeps every held waiter in one of these so that a single timer, set to
 * the earliest deadline, serves them all.
 */
export class DeadlineHeap<T extends HeapEntry> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    item.heapIndex = this.items.length;
    this.items.push(item);
    this.up(item.heapIndex);
  }

  /** Removes `item` if it is in the heap; false when it was not. */
  remove(item: T): boolean {
    const index = item.heapIndex;
    if (index < 0 || this.items[index] !== item) return false;
    const last = this.items.pop() as T;
    item.heapIndex = -1;
    if (last !== item) {
      this.items[index] = last;
      last.heapIndex = index;
      this.down(index);
      this.up(last.heapIndex);
    }
    return true;
  }

  /** Removes and returns every entry whose deadline is at or before `limit`, earliest first. */
  popUntil(limit: number): T[] {
    const due: T[] = [];
    for (let top = this.items[0]; top !== undefined && top.deadline <= limit; top = this.items[0]) {
      this.remove(top);
      due.push(top);
    }
    return due;
  }

  /** Removes and returns every entry matching `predicate` in one O(n) pass (the heap is rebuilt). */
  removeWhere(predicate: (item: T) => boolean): T[] {
    const removed: T[] = [];
    let kept = 0;
    for (const item of this.items) {
      if (predicate(item)) {
        item.heapIndex = -1;
        removed.push(item);
      } else {
        item.heapIndex = kept;
        this.items[kept] = item;
        kept += 1;
      }
    }
    this.items.length = kept;
    for (let index = Math.floor(kept / 2) - 1; index >= 0; index -= 1) this.down(index);
    return removed;
  }

  private up(start: number): void {
    let index = start;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if ((this.items[parent] as T).deadline <= (this.items[index] as T).deadline) return;
      this.swap(index, parent);
      index = parent;
    }
  }

  private down(start: number): void {
    let index = start;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let smallest = index;
      if (left < this.items.length && (this.items[left] as T).deadline < (this.items[smallest] as T).deadline)
        smallest = left;
      if (right < this.items.length && (this.items[right] as T).deadline < (this.items[smallest] as T).deadline)
        smallest = right;
      if (smallest === index) return;
      this.swap(index, smallest);
      index = smallest;
    }
  }

  private swap(a: number, b: number): void {
    const first = this.items[a] as T;
    const second = this.items[b] as T;
    this.items[a] = second;
    this.items[b] = first;
    first.heapIndex = b;
    second.heapIndex = a;
  }
}
