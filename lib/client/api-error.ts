/**
 * The API's error answer (`{ "error": { code, message, field } }`) as an exception, with the HTTP
 * status. The console's fetches (./api.ts) and the typed client (`slotkeeper/client`, which exports
 * it by this name) both throw it, so a caller checks one class whichever way it called.
 */
export class SlotkeeperApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = "SlotkeeperApiError";
  }
}
