import type { Metadata } from "next";
import type { ReactNode } from "react";
import { AccessBanner } from "@/components/access-banner";
import { AppNav } from "@/components/app-nav";
import { HydrationMark } from "@/components/hydration-mark";
import { ReplicaBanner } from "@/components/replica-banner";
import { Providers } from "./providers";
import "./globals.css";

export const metadata: Metadata = {
  title: "Slotkeeper",
  description: "Distributed cron on PostgreSQL: schedules, runs, workers and health.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" data-app="slotkeeper">
      <body>
        <Providers>
          <div className="min-h-screen md:flex">
            <AppNav />
            <div className="flex-1 min-w-0">
              <AccessBanner />
              <ReplicaBanner />
              <main className="px-4 py-4 md:px-8 md:py-6">{children}</main>
            </div>
          </div>
        </Providers>
        <HydrationMark />
      </body>
    </html>
  );
}
