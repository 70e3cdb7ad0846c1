"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
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

/** The console's sidebar: one link per page, the current one marked. */
export function AppNav() {
  const pathname = usePathname();
  return (
    <nav aria-label="Main" className="w-52 shrink-0 border-r border-slate-200 bg-white px-4 py-6">
      <Link href="/" className="mb-8 block text-lg font-semibold tracking-tight text-slate-900">
        Slotkeeper
      </Link>
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
    </nav>
  );
}
