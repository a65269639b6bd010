import { useState } from 'react';

/** The permission sets ticked on a consent form, and the toggle of one (the first value computed once). */
export function useSelection(
  initial: () => ReadonlySet<string>,
): [ReadonlySet<string>, (setId: string, on: boolean) => void] {
  const [selected, setSelected] = useState<ReadonlySet<string>>(initial);
  function toggle(setId: string, on: boolean): void {
    setSelected((current) => {
      const next = new Set(current);
      if (on) next.add(setId);
      else next.delete(setId);
      return next;
    });
  }
  return [selected, toggle];
}
