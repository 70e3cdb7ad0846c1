import type { Metadata } from "next";
import type { ReactNode } from "react";
import { AccessBanner } from "@/components/access-banner";
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
            <div className="flex-1 min-w-0">
              <AccessBanner />
              <main className="px-8 py-6">{children}</main>
            </div>
          </div>
        </Providers>
      </body>
    </html>
  );
}
