import type { Metadata } from "next";
import type { ReactNode } from "react";
import { AppNav } from "@/components/app-nav";
import { Providers } from "./providers";
import "./globals.css";

export const metadata: Metadata = {
  title: "Slotkeeper",
  description: "Distributed cron on PostgreSQL: schedules, runs, workers and health.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <Providers>
          <div className="flex min-h-screen">
            <AppNav />
            <main className="flex-1 min-w-0 px-8 py-6">{children}</main>
          </div>
        </Providers>
      </body>
    </html>
  );
}
