import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures";

// The console on a phone (390 px wide) and in the system's dark mode. The oracles are the browser's
// own layout and colours: no element sticks out past the viewport unless a scrolling box holds it,
// and text keeps a readable contrast against what is actually painted behind it (WCAG's formula,
// computed here from the pixels' sRGB values, not from the console's class names).
const SUFFIX = Date.now().toString(36);
const PHONE = { width: 390, height: 844 };

async function arrange(request: import("@playwright/test").APIRequestContext, kind: string): Promise<{ name: string; runId: number }> {
  const name = `e2e-${kind}-a-rather-long-schedule-name-that-must-wrap-or-scroll-${SUFFIX}`;
  const created = await request.post("/api/schedules", { data: { name, handler: "noop", everySeconds: 86_400 } });
  expect(created.status(), await created.text()).toBe(201);
  const res = await request.post(`/api/schedules/${encodeURIComponent(name)}/run-now`, { data: {} });
  expect(res.ok(), await res.text()).toBeTruthy();
  const runId = (await res.json()).run.id as number;
  await expect.poll(async () => (await (await request.get(`/api/runs/${runId}`)).json()).run.state, { timeout: 30_000 }).toBe("done");
  return { name, runId };
}

/** Elements whose box reaches past the viewport's right edge with no scrolling or clipping box around them. */
function cutOff(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const heldByScroller = (el: Element) => {
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        const o = getComputedStyle(p).overflowX;
        if (o === "auto" || o === "scroll" || o === "hidden" || o === "clip") return p.getBoundingClientRect().right <= width + 0.5;
      }
      return false;
    };
    const out: string[] = [];
    if (document.documentElement.scrollWidth > width) out.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
    for (const el of Array.from(document.body.querySelectorAll("*"))) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || getComputedStyle(el).visibility === "hidden") continue;
      if (r.right > width + 0.5 && !heldByScroller(el)) out.push(`${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""} "${(el.textContent ?? "").trim().slice(0, 40)}" right=${Math.round(r.right)}`);
    }
    return out.slice(0, 10);
  });
}

/** Text whose contrast with the colour painted behind it is below `min` (WCAG 2 relative luminance). */
function lowContrast(page: Page, min: number): Promise<string[]> {
  return page.evaluate((min) => {
    const ctx = document.createElement("canvas").getContext("2d", { willReadFrequently: true })!;
    const rgba = (css: string): [number, number, number, number] => {
      ctx.clearRect(0, 0, 1, 1);
      ctx.fillStyle = "#000";
      ctx.fillStyle = css;
      ctx.fillRect(0, 0, 1, 1);
      const d = ctx.getImageData(0, 0, 1, 1).data;
      return [d[0], d[1], d[2], d[3] / 255];
    };
    const lum = ([r, g, b]: number[]) => {
      const c = [r, g, b].map((v) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    };
    const background = (el: Element): number[] => {
      for (let p: Element | null = el; p; p = p.parentElement) {
        const c = rgba(getComputedStyle(p).backgroundColor);
        if (c[3] > 0.5) return c;
      }
      return rgba(getComputedStyle(document.documentElement).backgroundColor || "white");
    };
    const out: string[] = [];
    for (const el of Array.from(document.body.querySelectorAll("*"))) {
      const own = Array.from(el.childNodes).some((n) => n.nodeType === Node.TEXT_NODE && (n.textContent ?? "").trim());
      const r = el.getBoundingClientRect();
      if (!own || r.width === 0 || r.height === 0) continue;
      const style = getComputedStyle(el);
      if (style.visibility === "hidden" || Number(style.opacity) < 0.6) continue;
      const fg = lum(rgba(style.color));
      const bg = lum(background(el));
      const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
      if (ratio < min) out.push(`${el.tagName.toLowerCase()} "${(el.textContent ?? "").trim().slice(0, 30)}" ${ratio.toFixed(2)}`);
    }
    return out.slice(0, 10);
  }, min);
}

test.describe("on a phone", () => {
  test.use({ viewport: PHONE, isMobile: true, hasTouch: true });

  test("the navigation collapses behind a Menu button and every page fits the width", async ({ page, request }) => {
    const { name, runId } = await arrange(request, "phone");
    await page.goto("/");
    await expect(page.getByRole("heading", { name: "Overview" })).toBeVisible();
    // Collapsed: the links are out of the way until asked for, then one takes you there and closes.
    await expect(page.getByTestId("nav-schedules")).toBeHidden();
    await page.getByTestId("nav-toggle").click();
    await expect(page.getByTestId("nav-toggle")).toHaveAttribute("aria-expanded", "true");
    await page.getByTestId("nav-schedules").click();
    await expect(page.getByRole("heading", { name: "Schedules", exact: true })).toBeVisible();
    await expect(page.getByTestId("nav-schedules")).toBeHidden();

    const pages: [string, RegExp | string][] = [
      ["/", "Overview"],
      ["/schedules", "Schedules"],
      [`/schedules/${encodeURIComponent(name)}`, name],
      ["/runs", "Runs"],
      [`/runs/${runId}`, new RegExp(`Run.*${runId}|${name}`)],
      ["/workers", "Workers"],
      ["/alerts", "Alerts"],
      ["/audit", "Audit"],
      ["/settings", "API tokens"],
    ];
    for (const [path, heading] of pages) {
      await page.goto(path);
      await expect(page.getByRole("heading", { name: heading }).first()).toBeVisible();
      await page.waitForLoadState("load");
      await expect.poll(() => cutOff(page), { message: `nothing cut off on ${path}` }).toEqual([]);
    }
    await page.goto("/schedules");
    await page.screenshot({ path: "e2e/output/screenshots/phone-schedules.png", fullPage: true });
  });
});

/** What is painted behind the page is dark and its text light, and every piece of text keeps WCAG's 3:1. */
async function expectDarkAndReadable(page: Page, path: string, ready?: () => Promise<void>) {
  await page.goto(path);
  await expect(page.getByRole("heading").first()).toBeVisible();
  await page.waitForLoadState("load");
  await ready?.();
  const [bodyBg, bodyFg] = await page.evaluate(() => {
    const ctx = document.createElement("canvas").getContext("2d", { willReadFrequently: true })!;
    const luma = (css: string) => {
      ctx.fillStyle = css;
      ctx.fillRect(0, 0, 1, 1);
      const [r, g, b] = ctx.getImageData(0, 0, 1, 1).data;
      return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
    };
    return [luma(getComputedStyle(document.body).backgroundColor), luma(getComputedStyle(document.body).color)];
  });
  expect(bodyBg, `${path}: the background is dark`).toBeLessThan(0.2);
  expect(bodyFg, `${path}: the text is light`).toBeGreaterThan(0.8);
  // 3:1 is WCAG's minimum for large text and interface parts; it covers the charts' legends too.
  await expect.poll(() => lowContrast(page, 3), { message: `readable text on ${path}` }).toEqual([]);
}

test.describe("in dark mode", () => {
  test.use({ colorScheme: "dark" });

  test("the console follows the system's dark setting, and its text stays readable", async ({ page, request }) => {
    const { name, runId } = await arrange(request, "dark");
    // The Overview's charts hold the first 12 live schedules by name, one palette colour each: these
    // 12 sort first, so every colour is on the page with its legend entry, whatever else is stored.
    const palette = Array.from({ length: 12 }, (_, i) => `0-dark-palette-${SUFFIX}-${String(i).padStart(2, "0")}`);
    for (const p of palette) expect((await request.post("/api/schedules", { data: { name: p, handler: "noop", everySeconds: 86_400 } })).status()).toBe(201);
    try {
      // The charts load after the page: the check waits for the last legend entry.
      await expectDarkAndReadable(page, "/", () => expect(page.getByTestId("chart-since-last-success").getByText(palette[11])).toBeVisible());
      for (const path of ["/schedules", `/schedules/${encodeURIComponent(name)}`, `/runs/${runId}`, "/workers", "/settings"]) {
        await expectDarkAndReadable(page, path);
      }
      await page.goto("/");
      await page.screenshot({ path: "e2e/output/screenshots/dark-overview.png", fullPage: true });
    } finally {
      for (const p of palette) await request.delete(`/api/schedules/${encodeURIComponent(p)}`);
    }
  });
});
