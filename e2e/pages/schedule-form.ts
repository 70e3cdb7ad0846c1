import type { Page } from "@playwright/test";

/** The create/edit schedule form. */
export class ScheduleFormPage {
  constructor(readonly page: Page) {}
  async gotoNew() {
    await this.page.goto("/schedules/new");
  }
  input(field: string) {
    return this.page.getByTestId(`input-${field}`);
  }
  error(field: string) {
    return this.page.getByTestId(`error-${field}`);
  }
  async useInterval(seconds: number) {
    await this.page.getByTestId("timing-interval").check();
    await this.input("everySeconds").fill(String(seconds));
  }
  nextFireTimes() {
    return this.page.getByTestId("next-fire-time");
  }
  description() {
    return this.page.getByTestId("timing-description");
  }
  async catchUp(policy: "skip" | "latest" | "all") {
    await this.page.getByTestId(`catch-up-${policy}`).check({ force: true });
  }
  async save() {
    await this.page.getByTestId("save-schedule").click();
  }
}
