import type { Page } from "@playwright/test";

/** One schedule's page. */
export class ScheduleDetailPage {
  constructor(readonly page: Page) {}
  async goto(name: string) {
    await this.page.goto(`/schedules/${encodeURIComponent(name)}`);
  }
  runRows(state?: string) {
    return this.page.getByTestId("run-history").locator(state ? `[data-testid="run-row"][data-state="${state}"]` : `[data-testid="run-row"]`);
  }
  config(what: "catch-up" | "max-lateness" | "timing") {
    return this.page.getByTestId(`config-${what}`);
  }
}
