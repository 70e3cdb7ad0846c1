"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { useState } from "react";
import { SessionMenu } from "./session-menu";

const LINKS = [
  { href: "/", label: "Overview" },
  { href: "/schedules", label: "Schedules" },
  { href: "/runs", label: "Runs" },
  { href: "/workers", label: "Workers" },
  { href: "/alerts", label: "Alerts" },
  { href: "/audit", label: "Audit" },
  { href: "/settings", label: "Settings" },
];

/**
 * The console's navigation: one link per page, the current one marked. A sidebar from the `md`
 * breakpoint up; below it (a phone) a top bar whose Menu button opens the same links, closed again
 * by choosing a page, so the page itself keeps the whole width.
 */
export function AppNav() {
  const pathname = usePathname();
  // Open for the page it was opened on: a navigation closes it without an effect.
  const [openOn, setOpenOn] = useState<string | null>(null);
  const open = openOn === pathname;
  return (
    <nav aria-label="Main" className="shrink-0 border-b border-slate-200 bg-white px-4 py-3 md:w-52 md:border-b-0 md:border-r md:py-6">
      <div className="flex items-center justify-between md:block">
        <Link href="/" className="block text-lg font-semibold tracking-tight text-slate-900 md:mb-8">
          Slotkeeper
        </Link>
        <button
          type="button"
          data-testid="nav-toggle"
          aria-expanded={open}
          aria-controls="main-nav-links"
          onClick={() => setOpenOn(open ? null : pathname)}
          className="rounded-md border border-slate-300 px-3 py-1.5 text-sm text-slate-700 hover:bg-slate-100 md:hidden"
        >
          {open ? "Close" : "Menu"}
        </button>
      </div>
      <div id="main-nav-links" className={`${open ? "block" : "hidden"} mt-3 md:mt-0 md:block`}>
        <ul className="space-y-1">
          {LINKS.map((l) => {
            const active = l.href === "/" ? pathname === "/" : pathname.startsWith(l.href);
            return (
              <li key={l.href}>
                <Link
                  href={l.href}
                  data-testid={`nav-${l.label.toLowerCase()}`}
                  aria-current={active ? "page" : undefined}
                  className={`block rounded-md px-3 py-2 text-sm ${active ? "bg-slate-900 text-white" : "text-slate-700 hover:bg-slate-100"}`}
                >
                  {l.label}
                </Link>
              </li>
            );
          })}
        </ul>
        <SessionMenu />
      </div>
    </nav>
  );
}
