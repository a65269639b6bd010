import { describe, expect, it } from 'vitest';
import { DeadlineHeap, type HeapEntry } from './deadline-heap';

const entry = (deadline: number): HeapEntry & { id: number } => ({ deadline, heapIndex: -1, id: deadline });

describe('DeadlineHeap', () => {
  it('pops due entries earliest first and keeps the rest', () => {
    const heap = new DeadlineHeap<ReturnType<typeof entry>>();
    for (const deadline of [50, 10, 40, 30, 20, 60]) heap.push(entry(deadline));
    expect(heap.popUntil(35).map((e) => e.id)).toEqual([10, 20, 30]);
    expect(heap.size).toBe(3);
    expect(heap.peek()?.id).toBe(40);
  });

  it('removes any entry by its slot, and a second removal is a no-op', () => {
    const heap = new DeadlineHeap<ReturnType<typeof entry>>();
    const entries = Array.from({ length: 200 }, (_, i) => entry((i * 7919) % 1000));
    entries.forEach((e) => heap.push(e));
    for (const e of entries.filter((_, i) => i % 3 === 0)) expect(heap.remove(e)).toBe(true);
    expect(heap.remove(entries[0] as ReturnType<typeof entry>)).toBe(false);
    const rest = heap.popUntil(Infinity).map((e) => e.deadline);
    expect(rest).toEqual(
      entries
        .filter((_, i) => i % 3 !== 0)
        .map((e) => e.deadline)
        .sort((a, b) => a - b),
    );
  });

  it('removes by predicate in one pass and stays ordered', () => {
    const heap = new DeadlineHeap<ReturnType<typeof entry>>();
    const deadlines = Array.from({ length: 100 }, (_, i) => (i * 37) % 101);
    deadlines.forEach((deadline) => heap.push(entry(deadline)));
    expect(heap.removeWhere((e) => e.deadline % 2 === 0)).toHaveLength(deadlines.filter((d) => d % 2 === 0).length);
    const rest = heap.popUntil(Infinity).map((e) => e.deadline);
    expect(rest).toEqual([...rest].sort((a, b) => a - b));
    expect(rest.every((d) => d % 2 === 1)).toBe(true);
  });
});
