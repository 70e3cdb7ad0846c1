"use client";

import { useEffect } from "react";

/**
 * Marks the page `data-hydrated` on <html> once React has hydrated the server's HTML: from then on
 * what is typed into the console's fields is React's. Browser tests wait for it after a navigation
 * (e2e/fixtures.ts), so they never type into a field React is about to take over.
 */
export function HydrationMark() {
  useEffect(() => {
    document.documentElement.dataset.hydrated = "true";
  }, []);
  return null;
}
