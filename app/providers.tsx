"use client";

import { QueryClientProvider } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { z } from "zod";
import { getQueryClient } from "@/lib/client/get-query-client";

// The forms validate with the API's own zod schemas. Zod's fast path compiles parsers with
// `new Function`, which the console's CSP forbids: its probe is caught, but the browser still reports
// a CSP violation on every page with a form. The interpreted path gives the same answers.
z.config({ jitless: true });

export function Providers({ children }: { children: ReactNode }) {
  return <QueryClientProvider client={getQueryClient()}>{children}</QueryClientProvider>;
}
