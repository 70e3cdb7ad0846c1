// Empty stand-in for the "server-only" package under Vitest: server modules import it, and tests run them on the server anyway.
export {};
