// `npm run db:migrate`: apply the committed migrations to DATABASE_URL (or the embedded server).
import { ConfigError, loadConfig } from "../lib/config";
import { DatabaseUnreachableError, openDatabase } from "../lib/db/connect";
import { EmbeddedDatabaseError } from "../lib/db/embedded";
import { migrateDatabase } from "../lib/db/migrate";

async function main() {
  const config = loadConfig();
  const db = await openDatabase(config);
  try {
    await migrateDatabase(db.url);
    console.log("migrations applied");
  } finally {
    await db.stop();
  }
}

main().catch((err) => {
  const known = err instanceof ConfigError || err instanceof DatabaseUnreachableError || err instanceof EmbeddedDatabaseError;
  console.error(`slotkeeper: ${known ? err.message : (err?.stack ?? String(err))}`);
  process.exit(1);
});
