import type { Page } from "@playwright/test";

/** The Overview page as a user sees it. */
export class OverviewPage {
  constructor(readonly page: Page) {}
  async goto() {
    await this.page.goto("/");
  }
  totals() {
    return this.page.getByTestId("overview-totals");
  }
  stat(name: "schedules" | "paused" | "workers" | "pending" | "running" | "dead") {
    return this.page.getByTestId(`total-${name}`);
  }
}
