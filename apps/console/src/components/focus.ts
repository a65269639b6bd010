import { createContext, useContext, useLayoutEffect } from 'react';

/** Set by a page that wants the person's whole attention (consent to an authorization request): no navigation around it. */
export const FocusContext = createContext<(focused: boolean) => void>(() => undefined);

/** While `focused`, the layout shows no application navigation. */
export function useFocusedPage(focused: boolean): void {
  const setFocused = useContext(FocusContext);
  // Before paint: the navigation never flashes in and out.
  useLayoutEffect(() => {
    setFocused(focused);
    return () => setFocused(false);
  }, [setFocused, focused]);
}
