// `npm run audit -- verify <export.ndjson> --keys <audit-jwks.json>`: checks an export of a tenant's
// audit log offline and names its first broken link (docs/audit.md). See scripts/audit-verify.ts.
import { auditCommand, processIo } from "./audit-verify";

process.exitCode = await auditCommand(process.argv.slice(2), processIo);
