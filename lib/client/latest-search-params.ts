"use client";
import { useSearchParams } from "next/navigation";
import { useEffect, useRef } from "react";

/**
 * The page's search params as last written by the page itself. `router.replace` changes
 * `useSearchParams()` only once its navigation commits, so two changes in quick succession (one
 * select, then another) would otherwise both start from the URL before the first: the second
 * write drops the first change. `latest()` is the newest URL the page wrote and the router has not
 * caught up with yet, else the router's; call `wrote` with each URL before replacing with it. A URL
 * the page did not write (Back, a link) clears what is pending: the router's URL is then the truth.
 */
export function useLatestSearchParams() {
  const sp = useSearchParams();
  const key = sp.toString();
  const pending = useRef<string[]>([]);
  useEffect(() => {
    const i = pending.current.indexOf(key);
    pending.current = i === -1 ? [] : pending.current.slice(i + 1);
  }, [key]);
  return {
    latest: () => new URLSearchParams(pending.current.at(-1) ?? key),
    wrote: (next: URLSearchParams) => {
      pending.current.push(next.toString());
    },
  };
}
