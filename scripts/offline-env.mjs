/** Environment for wrangler that keeps it from reaching the internet: no metrics, no error reports, no cf fetch. */
export const offlineEnv = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_SEND_ERROR_REPORTS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
};
