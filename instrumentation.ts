/**
 * Next.js runs this once per server before it answers requests: check the access settings (an
 * invalid one stops the server, naming the variable) and install the client-address hook.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { loadAccessSettings } = await import("./lib/auth/settings");
    loadAccessSettings(process.env);
    // Every other setting the console reads (SLOTKEEPER_OUTBOUND_ALLOW among them) fails here too, naming the variable.
    const { loadConfig } = await import("./lib/config");
    loadConfig(process.env);
    const { installPeerHook } = await import("./lib/auth/peer-hook");
    installPeerHook();
  }
}
