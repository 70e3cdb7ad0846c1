import { useSyncExternalStore } from "react";

const never = () => () => {};

/**
 * False in the server's HTML and while React hydrates it, true once React owns the page. A form
 * whose fields are React state is disabled until then: what a person (or a browser test) types or
 * picks before hydration would otherwise be dropped by the state React starts from, or submitted
 * natively with no handler.
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(never, () => true, () => false);
}
