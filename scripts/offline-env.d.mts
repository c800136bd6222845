/** Types of scripts/offline-env.mjs, for the tests that import it: wrangler kept off the internet. */
export const offlineEnv: NodeJS.ProcessEnv;
