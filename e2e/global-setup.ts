import fs from "node:fs";
import path from "node:path";
import { STACK_FILE, startStack } from "./stack";

/** Playwright global setup: start the stack once, hand its addresses to the tests, stop it after. */
export default async function globalSetup() {
  const stack = await startStack();
  fs.mkdirSync(path.dirname(STACK_FILE), { recursive: true });
  fs.writeFileSync(STACK_FILE, JSON.stringify({ baseURL: stack.baseURL, databaseUrl: stack.databaseUrl }));
  process.env.E2E_BASE_URL = stack.baseURL;
  return async () => {
    await stack.stop();
  };
}
