import "server-only";
import { toResponse } from "../errors";
import { getLog } from "./db";

/** Wrap a route handler: every thrown error becomes the API's one error shape. */
export function route<A extends unknown[]>(fn: (...args: A) => Promise<Response>) {
  return async (...args: A): Promise<Response> => {
    try {
      return await fn(...args);
    } catch (err) {
      return toResponse(err, (e) => getLog().error({ event: "api:error", err: e }));
    }
  };
}
