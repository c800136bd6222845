import * as z from "zod";
import { EnvironmentSchema } from "./envelope";

/** What `GET /healthz` answers in `data` when the proxy is up. */
export const HealthSchema = z.strictObject({
  status: z.literal("ok"),
  environment: EnvironmentSchema,
  catalog_version: z.string(),
  namespaces: z.array(z.string()),
});
export type Health = z.infer<typeof HealthSchema>;
